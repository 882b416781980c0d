import pytest

from tests.link.helpers import mpy_build


@pytest.fixture(scope="session")
def fw_build(tmp_path_factory):
    return mpy_build(tmp_path_factory.mktemp("fwbuild"))
