"""A local S3-compatible endpoint (moto server mode) for the Airflow connection ``aws_default``."""

from __future__ import annotations

import json
import logging

import boto3
from moto.server import ThreadedMotoServer

REGION = "us-east-1"
# moto accepts any key; these only keep boto3 from looking for real credentials.
ACCESS_KEY = "demo-access-key"
SECRET_KEY = "demo-secret-key"


class LocalS3:
    """moto's S3-compatible server on 127.0.0.1, on a free port, in a thread of this process."""

    def __init__(self) -> None:
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.endpoint_url = ""

    def start(self) -> str:
        # moto serves through werkzeug, which logs every request: keep the demo's output readable.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint_url = f"http://{host}:{port}"
        return self.endpoint_url

    def stop(self) -> None:
        """Stop the server if it was started (the demo may be stopped before it is)."""
        if self.endpoint_url:
            self._server.stop()
            self.endpoint_url = ""

    def create_bucket(self, name: str) -> None:
        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )
        client.create_bucket(Bucket=name)

    def airflow_connection(self) -> str:
        """``AIRFLOW_CONN_AWS_DEFAULT``: the same connection as production, with ``endpoint_url`` added."""
        return json.dumps(
            {
                "conn_type": "aws",
                "login": ACCESS_KEY,
                "password": SECRET_KEY,
                "extra": {"endpoint_url": self.endpoint_url, "region_name": REGION},
            }
        )
