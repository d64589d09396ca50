"""The pure rules of Saboteur and Saboteur 2: no I/O, no crypto, no database."""
