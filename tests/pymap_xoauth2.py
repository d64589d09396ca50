"""pymap with the XOAUTH2 SASL mechanism switched on (pymap itself offers PLAIN and LOGIN).

Run as `python tests/pymap_xoauth2.py ARGS` with pymap's own arguments. A real XOAUTH2
exchange on the wire (`user=...^Aauth=Bearer TOKEN^A^A`, base64, RFC 7628 style); the
bearer token is then checked as the maildir backend checks a password, against the user's
stored hash: the stand-in for a provider's token service, so a test decides which token
is valid.
"""

from __future__ import annotations

from collections.abc import Sequence

import pymap.config
from pymap_server import main  # pymap with its quick IDLE checks
from pysasl import SASLAuth
from pysasl.creds.plain import PlainCredentials
from pysasl.exception import InvalidResponse
from pysasl.mechanism import ChallengeResponse
from pysasl.mechanism.oauth import OAuth2Mechanism
from pysasl.mechanism.plain import PlainMechanism


class BearerAsPassword(OAuth2Mechanism):
    def server_attempt(self, responses: Sequence[ChallengeResponse]):  # type: ignore[override]
        super().server_attempt(responses)  # the same parsing and challenges as pysasl's own
        found = self._pattern.match(responses[0].response)
        if found is None:
            raise InvalidResponse()
        user, token = (g.decode("utf-8") for g in found.groups())
        return PlainCredentials(user, token), None


pymap.config.IMAPConfig.tls_auth = property(  # type: ignore[assignment]
    lambda self: SASLAuth([BearerAsPassword(), PlainMechanism()]))

if __name__ == "__main__":
    main()
