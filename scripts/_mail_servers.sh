# Sourced by scripts/test: the real-mail tests (tests/realmail.py) run private instances of
# Debian's Dovecot and Postfix on loopback (the packages' own services stay unused). Where they are
# missing they are installed, as root (CI, a fresh machine): so the README's one test command
# passes the whole suite there. Without root, one line says how; those tests then fail, loudly.
mail_packages="dovecot-imapd dovecot-lmtpd postfix"
if [ ! -x /usr/sbin/dovecot ] || [ ! -x /usr/sbin/postfix ] || [ ! -e /usr/lib/dovecot/lmtp ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing Debian's $mail_packages for the real-mail tests..." >&2
        if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q \
               && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $mail_packages; } >&2; then
            echo "warning: $mail_packages could not be installed: the real-mail tests will fail" >&2
        fi
    else
        echo "warning: the real-mail tests need Debian's $mail_packages (not installed): they will fail;" \
             "install them with: sudo apt-get install -y --no-install-recommends $mail_packages" >&2
    fi
fi
