"""Every executable operator on the real DirectML provider (Wine lane): the tests of tests/ops (doc examples, and
a sample of each property test) run against the server under Wine, with the same NumPy references."""

from __future__ import annotations

import os

import pytest

from tests.dml.conftest import WineServer
from tests.dml.fallbacks import Fallbacks
from tests.ops.test_element_wise import OPERATORS as ELEMENT_WISE
from tests.provider_cases import LaneClient, not_run, operator_tests

pytestmark = [pytest.mark.dml, pytest.mark.timeout(1200)]

#: Generated examples per property test: each new desc is a new DirectML session (about a second under lavapipe).
EXAMPLES = int(os.environ.get("DMLRPC_DML_OPERATOR_EXAMPLES", "1"))
#: Operator cases that the server ran on the host: printed at the end; tests/dml/test_element_wise.py pins the known
#: causes.
FALLBACKS = Fallbacks()


@pytest.fixture(scope="module")
def client(dml_server: WineServer) -> LaneClient:
    return FALLBACKS.client(dml_server)


# The element-wise and activation operators have their own lane test (test_element_wise.py).
globals().update(operator_tests(EXAMPLES, exclude={"element_wise"}))


def test_every_executable_operator_ran_on_directml(client: LaneClient) -> None:
    # Collected last: by now every moved test has run its operator on the lane's server.
    print(f"\noperator cases run on DirectML: {dict(sorted(client.cases.items()))}")
    print(f"of those, {FALLBACKS.report()}")
    assert not not_run(client.cases, covered=ELEMENT_WISE)
