# syntax=docker/dockerfile:1
# The beneficiary service as a container image: `beneficiaries serve` on Node.js 24 over
# node:http, SQLite in the /data volume by default, PostgreSQL and Redis by environment
# (compose.yaml). docs/runtimes-and-containers.md says how to build, run and check it.
ARG NODE_IMAGE=node:24-bookworm-slim

# 1. Compile the TypeScript and pack the package as npm would publish it.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build && npm pack --ignore-scripts --pack-destination /pack \
 && mkdir /app && tar -xzf /pack/beneficiary-service-*.tgz -C /app --strip-components=1 \
 && cp package-lock.json /app/
WORKDIR /app
# The application: the package, its dependencies and the drivers, at the lockfile's versions;
# the OpenTelemetry packages too, so that OTEL_EXPORTER_OTLP_ENDPOINT turns tracing on.
RUN node /src/container/production-manifest.mjs better-sqlite3 kysely pg @redis/client \
    @opentelemetry/api @opentelemetry/context-async-hooks @opentelemetry/core \
    @opentelemetry/exporter-trace-otlp-http @opentelemetry/resources @opentelemetry/sdk-trace \
 && npm install --package-lock-only --omit=dev --ignore-scripts --no-audit --no-fund

# 2. Install the production dependencies only; better-sqlite3 builds its addon here.
FROM ${NODE_IMAGE} AS install
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. What runs: no compiler, no npm in the command line, not root.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    TRANSPORT=node \
    DATABASE_PATH=/data/beneficiaries.sqlite
WORKDIR /app
COPY --from=install /app ./
# The database folder, its owner's alone (D32); a named volume takes its owner and mode.
RUN mkdir -m 0700 /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: the server is PID 1 and gets SIGTERM itself; it drains and exits 0.
ENTRYPOINT ["node", "dist/server/cli.js"]
CMD ["serve"]
