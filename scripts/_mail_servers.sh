# Sourced by scripts/test: the real-mail tests (tests/realmail.py) run private instances of
# Debian's Dovecot and Postfix on loopback as root (they switch to users of their own; the
# packages' own services stay unused). As root, missing packages are installed here (CI, a fresh
# machine), so the README's one test command passes the whole suite. As another user, one line
# says that those tests will fail, loudly, and what they need.
mail_packages="dovecot-imapd dovecot-lmtpd postfix"
mail_missing=0
[ -x /usr/sbin/dovecot ] && [ -x /usr/sbin/postfix ] && [ -e /usr/lib/dovecot/lmtp ] || mail_missing=1
if [ "$(id -u)" != 0 ]; then
    why="the real-mail tests run Dovecot and Postfix as root: as this user they will fail"
    [ "$mail_missing" = 0 ] || why="$why (and Debian's $mail_packages are not installed)"
    echo "warning: $why" >&2
elif [ "$mail_missing" = 1 ]; then
    if ! command -v apt-get >/dev/null; then
        echo "warning: the real-mail tests need Debian's $mail_packages, and there is no apt-get here" >&2
    else
        echo "installing Debian's $mail_packages for the real-mail tests..." >&2
        if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q \
               && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $mail_packages; } >&2; then
            echo "warning: $mail_packages could not be installed: the real-mail tests will fail" >&2
        fi
    fi
fi
