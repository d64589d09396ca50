"""Transports move opaque armoured packets between players.

They never look inside a packet: no crypto and no game logic live here.
``atomic`` holds the crash-safe write primitives, ``folder`` the shared-folder
layout (Syncthing, Dropbox, NFS) and ``mail`` composing, sending and reading mail.
"""
