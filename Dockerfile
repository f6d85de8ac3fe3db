# trainlint admission webhook: runs as a non-root user on a read-only root filesystem
# (the Deployment sets readOnlyRootFilesystem; only /tmp is a writable emptyDir).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY trainlint ./trainlint
RUN pip install --no-cache-dir --prefix=/install ".[serve]"

FROM python:3.11-slim
COPY --from=build /install /usr/local
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["trainlint"]
CMD ["serve", "--tls-cert=/tls/tls.crt", "--tls-key=/tls/tls.key"]
