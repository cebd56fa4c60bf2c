"""Operations over the log: learn, evaluate, stats, fine-tuning exports, a failed run's record.

Each reads the stored events (and may replay the steps in a dry run); none is a step of the daily run.
"""
