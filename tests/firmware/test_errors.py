"""Every error the firmware raises on purpose is a shoe.errors.ShoeError with a reason code;
the host's CLI error is one too (reason None unless the shoe refused)."""

import pytest

from shoe.drivers.mfrc522 import RFIDError
from shoe.errors import ShoeError
from shoe.journal.extents import ExtentError
from shoe.journal.journal import JournalError
from shoe.journal.ring import RingFull
from shoe.link import codec
from shoe.link.message import MAC_LEN, LinkError, open_command


def test_converted_errors_carry_their_reason():
    cases = [
        (codec.CodecError("truncated"), "truncated"),
        (LinkError("bad_mac", 7), "bad_mac"),
        (RFIDError("no answer from the tag", "rfid_timeout"), "rfid_timeout"),
        (JournalError("outbox_full"), "outbox_full"),
        (RingFull(), "ring_full"),
        (ExtentError("extent not found on the flash"), "journal_extents"),
    ]
    for err, reason in cases:
        assert isinstance(err, ShoeError) and isinstance(err, ValueError)
        assert err.reason == reason
        assert str(err)
    assert LinkError("bad_mac", 7).detail == 7
    assert str(codec.CodecError("truncated")) == "truncated"  # the wire detail is the code


def test_a_malformed_message_is_a_link_error_naming_the_codec_reason():
    payload = b"\x84\x61" + b"\x50" + b"m" * MAC_LEN  # a text item cut short
    with pytest.raises(LinkError) as e:
        open_command(payload, (b"k" * 32,), b"tag")
    assert (e.value.reason, e.value.detail) == ("malformed", "truncated")


def test_extent_errors_are_no_longer_os_errors():
    # ExtentError was an OSError: boot code that catches OSError (a missing file) must not
    # swallow a ring map that does not check out
    assert not issubclass(ExtentError, OSError)


def test_the_host_error_is_a_shoe_error_without_a_reason_of_its_own():
    from host_tools.errors import ShoeError as HostError

    assert issubclass(HostError, ShoeError)
    assert HostError("no port").reason is None
    assert HostError("status refused by the shoe: busy", "busy").reason == "busy"
    assert str(HostError("no port")) == "no port"
