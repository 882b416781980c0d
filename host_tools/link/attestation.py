"""Checking a shoe's attestation (the answer to an "attest" challenge) against the local
firmware tree: the same walk and manifest as the firmware's shoe.attest (docs/protocol.md,
"Attestation")."""

from shoe import attest


def verify_attestation(answer, key, nonce, roots, image=None):
    """-> (ok, local_manifest): the shoe's MAC is right for this nonce and its manifest equals
    the one computed from the local firmware tree `roots` (same walk as shoe.attest), with the
    entry "image" for `image` (the flash a frozen image leaves: host_tools/uf2.Image.flash) when
    the challenge asked for it. Never ok when nothing local is hashed (a mistyped root): the
    manifest of nothing is what a shoe running the frozen image answers to a plain challenge,
    and it proves nothing (docs/certification.md)."""
    files = attest.file_hashes([str(r) for r in roots])
    if image is not None:
        files = attest.with_image(files, attest.image_hash(image))
    local = attest.manifest(files)
    try:
        mac_ok = attest.attest_mac(key, nonce, answer["manifest"]) == answer["mac"]
        ok = mac_ok and answer["nonce"] == nonce and answer["manifest"] == local and len(files) > 0
    except (KeyError, TypeError):
        ok = False
    return ok, local
