"""Every prefect.yaml entrypoint imports and is a flow taking the parameters its deployment passes."""

from __future__ import annotations

import importlib
import inspect

import yaml
from prefect import Flow

from tests.conftest import REPO


def test_every_entrypoint_is_a_flow_with_the_deployed_parameters() -> None:
    spec = yaml.safe_load((REPO / "prefect.yaml").read_text())
    assert spec["deployments"]
    for deployment in spec["deployments"]:
        module_path, name = deployment["entrypoint"].split(":")
        module = importlib.import_module(module_path.removesuffix(".py").replace("/", "."))
        flow = getattr(module, name)
        assert isinstance(flow, Flow), deployment["name"]
        accepted = set(inspect.signature(flow.fn).parameters)
        assert set(deployment.get("parameters", {})) <= accepted, deployment["name"]
