"""`trainlint serve`: the rules as a validating admission webhook.

Importing this package loads the webhook stack (aiohttp, prometheus-client, cryptography,
kubernetes-asyncio); only the `serve` command does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from trainlint.webhook import tls
from trainlint.webhook.admission import Mode
from trainlint.webhook.server import ServeOptions, serve_forever
from trainlint.webhook.sources import ClusterSource, ContextSource, DirectorySource

__all__ = ["Mode", "NoCredentials", "ServeOptions", "run"]


def run(options: ServeOptions, *, self_signed: bool, ca_out: Path | None,
        context_dir: Path | None) -> None:
    """Set up logging, certificates and the context source, then serve until SIGTERM."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    if self_signed:
        folder = Path(tempfile.mkdtemp(prefix="trainlint-tls-"))
        files = tls.generate(folder, tls.service_names(options.service_name, options.namespace))
        if ca_out is not None:
            shutil.copyfile(files.ca, ca_out)
        ca = ca_out or files.ca
        print(json.dumps({"event": "self-signed", "ca": str(ca)}), file=sys.stderr, flush=True)
        options = replace(options, tls_cert=files.cert, tls_key=files.key)
    asyncio.run(_main(options, context_dir))


async def _main(options: ServeOptions, context_dir: Path | None) -> None:
    source: ContextSource
    if context_dir is not None:
        source = DirectorySource(context_dir)
    else:
        # The client's models are imported only here: serving from files never loads them.
        from kubernetes_asyncio.config import ConfigException

        from trainlint.webhook.sources import cluster_configuration

        try:
            source = ClusterSource(await cluster_configuration())
        except ConfigException as error:
            raise NoCredentials(str(error)) from None
    await serve_forever(options, source)


class NoCredentials(Exception):
    """Neither a pod's service account nor a kubeconfig says how to reach the cluster."""
