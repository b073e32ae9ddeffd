"""gunicorn settings for the web app (read from the working directory)."""

bind = "0.0.0.0:8000"
workers = 3
accesslog = "-"
# Player, invitation, rematch and unsubscribe paths are credentials, and a page's
# Referer may be one too: the access log records neither the path nor the referrer.
access_log_format = '%(h)s %(t)s "%(m)s" %(s)s %(b)s %(M)sms'
