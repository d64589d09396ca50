"""Play with no trusted host (docs/trustless.md): the stacks, the messages and the seat's dealer.

Built on pbem.protocol.mental (the group, ElGamal and the proofs)."""
