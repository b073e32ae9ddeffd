# The Split Mind by Mail web app and mail worker (the same image, two commands).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 SPLITMIND_ENV=production
WORKDIR /app

COPY pyproject.toml README.md ./
COPY service ./service
COPY migrations ./migrations
COPY templates ./templates
COPY gunicorn.conf.py ./
# Editable: the app finds templates/ and migrations/ next to service/.
RUN pip install --no-cache-dir -e '.[redis]'

RUN useradd --create-home splitmind
USER splitmind
EXPOSE 8000

# Migrate, then serve; the worker service overrides the command.
CMD ["sh", "-c", "flask --app service db upgrade && exec gunicorn 'service:create_app()'"]
