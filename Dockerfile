# The Split Mind by Mail web app and mail worker (the same image, two commands).
# The first stage builds the wheel (it carries the templates, migrations, static
# files and compiled translations); the second installs it, as `pip install .` does.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY service ./service
COPY migrations ./migrations
COPY templates ./templates
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 SPLITMIND_ENV=production
WORKDIR /app
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir "$(ls /wheels/*.whl)[redis]" && rm -rf /wheels
COPY gunicorn.conf.py ./

RUN useradd --create-home splitmind
USER splitmind
EXPOSE 8000

# Migrate, then serve on every interface of the container (gunicorn.conf.py binds
# 127.0.0.1, for a host install); the worker service overrides the command.
CMD ["sh", "-c", "flask --app service db upgrade && exec gunicorn --bind 0.0.0.0:8000 'service:create_app()'"]
