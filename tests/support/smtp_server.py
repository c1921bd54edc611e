"""A real SMTP server for the tests (Debian's python3-aiosmtpd), storing messages in a maildir.

  smtp_server.py --port P --maildir DIR [--cert PEM --key PEM] [--user U --password PW --log F]

With --cert/--key it offers STARTTLS and requires it before any mail command. With --user it
requires AUTH (over TLS when --cert is given) and appends one line per attempt to --log:
"<mechanism> <login> ok|refused tls|plain".
"""
import argparse
import ssl
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import AuthResult, LoginPassword


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--maildir", required=True)
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--user")
    p.add_argument("--password")
    p.add_argument("--log")
    a = p.parse_args()

    def authenticator(server, session, envelope, mechanism, auth_data):
        login = password = ""
        if isinstance(auth_data, LoginPassword):
            login = auth_data.login.decode("utf-8", "replace")
            password = auth_data.password.decode("utf-8", "replace")
        ok = login == a.user and password == a.password
        with open(a.log, "a", encoding="utf-8") as f:
            f.write("%s %s %s %s\n" % (mechanism, login, "ok" if ok else "refused",
                                       "tls" if session.ssl else "plain"))
        return AuthResult(success=ok, handled=False)  # False: aiosmtpd answers 535 itself

    kwargs = {}
    if a.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(a.cert, a.key)
        kwargs.update(tls_context=context, require_starttls=True)
    if a.user:
        kwargs.update(authenticator=authenticator, auth_required=True,
                      auth_require_tls=bool(a.cert))
    controller = Controller(Mailbox(a.maildir), hostname="127.0.0.1", port=a.port, **kwargs)
    controller.start()
    print("ready", flush=True)
    threading.Event().wait()  # until killed


if __name__ == "__main__":
    main()
