"""How the command line shows what the services return: every table and line a command prints,
for a terminal of 80 columns, laid out with Rich.

``console`` holds the two consoles (stdout for results, stderr for progress and errors);
``log`` the event log's views (events, a day's projections, stats, shadow comparisons);
``runs`` a run's, a backfill's, a collection's, a check's and the alerts' output;
``policy`` the improvement loop's (evaluation, learning, adoptions, the regression set);
``trace`` an item's chain as a tree; ``text`` wraps lines at words and counts their columns
(``rich.cells``) for the outputs that are lists of lines rather than tables.
"""

from flows.views.log import events_view, questions_view, scores_view, stats_view

__all__ = ["events_view", "questions_view", "scores_view", "stats_view"]
