"""validations."""
