"""gunicorn settings for the web app (read from the working directory).

The app is loaded once, in the master, before any worker starts
(``preload_app``): settings the service refuses stop gunicorn with the one-line
message of :class:`service.config.ConfigError` and exit status 1.
"""

bind = "0.0.0.0:8000"
workers = 3
preload_app = True
# No management socket: several servers on one machine would share its default path.
control_socket_disable = True
accesslog = "-"
# Player, invitation, rematch and unsubscribe paths are credentials, and a page's
# Referer may be one too: the access log records neither the path nor the referrer.
access_log_format = '%(h)s %(t)s "%(m)s" %(s)s %(b)s %(M)sms'
