"""pbem: asynchronous Saboteur by email or shared folder."""

__version__ = "0.1.0"
