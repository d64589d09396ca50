"""Mental poker building blocks: a prime-order group, ElGamal, and the proofs over it.

Nothing here knows about cards, seats or files; docs/trustless.md says how the protocol uses
them. Layers: group (points and scalars of ristretto255) -> transcript (Fiat-Shamir) ->
elgamal (keys, ciphertexts, decryption tokens) -> proofs (Schnorr, Chaum-Pedersen) ->
shuffle (Terelius-Wikstrom proof of a re-encryption shuffle) and vss (Feldman sharing of a
seat's keys, and the stand-in shares that do a vanished seat's part).
"""
