import os

# Key files in tests use a cheap scrypt cost; real keys keep the default.
os.environ.setdefault("PBEM_SCRYPT_N", "1024")
