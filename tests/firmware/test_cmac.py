"""shoe.cmac (AES-CMAC, NXP's truncation, AN10922 diversification) and shoe.sun's SDMMAC, checked
against published vectors, not against themselves: RFC 4493 section 4 (all four examples, with
the subkeys), NXP AN10922 section 2.2.1 (AES-128 diversification), NXP AN12196 (SDM session
keys Table 1, PICCData decryption Table 2, SDMMAC with an empty MAC input Table 4 and a
non-empty one Table 5, the plain UID/counter example of section 3.4.4.1), the same under
MicroPython (cryptolib); and against the `cryptography` package's CMAC for any key and message."""

from binascii import unhexlify as u

from hypothesis import given, settings
from hypothesis import strategies as st

from shoe import cmac, sun
from tests.mpy import run_code

K = u("2b7e151628aed2a6abf7158809cf4f3c")
M64 = u(
    "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
    "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"
)
RFC4493 = [
    (0, "bb1d6929e95937287fa37d129b756746"),
    (16, "070a16b46b4d4144f79bdd9dd04a287c"),
    (40, "dfa66747de9ae63030ca32611497c827"),
    (64, "51f0bebf7e3b9d92fc49741779363cfe"),
]
Z = bytes(16)


def test_rfc4493_subkeys_and_examples():
    k1, k2 = cmac.subkeys(K)
    assert (k1.hex(), k2.hex()) == (
        "fbeed618357133667c85e08f7236a8de",
        "f7ddac306ae266ccf90bc11ee46d513b",
    )
    for n, want in RFC4493:
        assert cmac.cmac(K, M64[:n]).hex() == want, n
        assert cmac.cmac(K, memoryview(M64)[:n], (k1, k2)).hex() == want, n


def test_an10922_aes128_diversification():
    master = u("00112233445566778899AABBCCDDEEFF")
    m = u("04782E21801D803042F54E585020416275")  # UID || AID || system identifier "NXP Abu"
    assert cmac.diversify(master, m).hex() == "a8dd63a3b89d54b37ca802473fda9175"
    # a short input is padded to two blocks (K2), unlike a plain CMAC of 01 || m
    assert cmac.diversify(master, b"\x04") != cmac.cmac(master, b"\x01\x04")
    # 31 bytes fill two blocks exactly: K1, the same as CMAC then
    assert cmac.diversify(master, bytes(range(31))) == cmac.cmac(
        master, b"\x01" + bytes(range(31))
    )


def test_an12196_sdm_vectors():
    # Table 1: session keys from SV1 / SV2
    kf = u("5ACE7E50AB65D5D51FD5BF5A16B8205B")
    assert (
        cmac.cmac(kf, u("C33C0001008004C767F2066180010000")).hex()
        == "66da61797e23deca5d8eca13bbadf7a9"
    )
    assert (
        cmac.cmac(kf, u("3CC30001008004C767F2066180010000")).hex()
        == "3a3e8110e05311f7a3fcf0d969bf2b48"
    )
    # Table 2: PICCData, AES-CBC with a zero IV under the (zero) SDMMetaReadKey
    assert (
        cmac.cbc_decrypt(Z, u("EF963FF7828658A599F3041510671E88")).hex()
        == "c704de5f1eacc0403d0000da5cf60941"
    )
    # Table 4: UID 04DE5F1EACC040, SDMReadCtr 61, empty MAC input
    uid = u("04DE5F1EACC040")
    assert sun.sun_mac(Z, uid, 61, b"").hex() == "94eed9ee65337086"
    # Table 5: MAC over "<ENC file data>&cmac="
    assert (
        sun.sun_mac(Z, u("04958CAA5C5E80"), 8, b"CEE9A53E3E463EF1F459635736738962&cmac=").hex()
        == "ecc1e7f6c6c73bf6"
    )
    # 3.4.4.1: plain mirroring, ?uid=041E3C8A2D6B80&ctr=000006&cmac=4B00064004B0B3D3
    assert sun.sun_mac(Z, u("041E3C8A2D6B80"), 6, b"").hex() == "4b00064004b0b3d3"
    # MACt keeps the odd-indexed bytes
    assert cmac.mact(bytes(range(16))) == bytes(range(1, 16, 2))


def test_the_same_under_micropython():
    code = """
from binascii import unhexlify as u, hexlify
from shoe import cmac, sun
K = u("2b7e151628aed2a6abf7158809cf4f3c")
M = u("%s")
for n in (0, 16, 40, 64):
    print(hexlify(cmac.cmac(K, M[:n])).decode())
print(hexlify(cmac.diversify(u("00112233445566778899AABBCCDDEEFF"),
                             u("04782E21801D803042F54E585020416275"))).decode())
print(hexlify(sun.sun_mac(bytes(16), u("04DE5F1EACC040"), 61, b"")).decode())
print(hexlify(sun.sun_mac(bytes(16), u("04958CAA5C5E80"), 8,
                          b"CEE9A53E3E463EF1F459635736738962&cmac=")).decode())
""" % M64.hex()
    got = run_code(code).split()
    assert got == [w for _, w in RFC4493] + [
        "a8dd63a3b89d54b37ca802473fda9175",
        "94eed9ee65337086",
        "ecc1e7f6c6c73bf6",
    ]


@settings(max_examples=200, deadline=None)
@given(key=st.binary(min_size=16, max_size=16), msg=st.binary(max_size=80))
def test_cmac_equals_the_cryptography_packages(key, msg):
    from cryptography.hazmat.primitives.ciphers import algorithms
    from cryptography.hazmat.primitives.cmac import CMAC

    c = CMAC(algorithms.AES(key))
    c.update(msg)
    assert cmac.cmac(key, msg) == c.finalize()
