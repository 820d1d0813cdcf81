"""The curated public API: ``helikon.__all__`` is exactly the public names."""

import helikon


def test_all_matches_public_names() -> None:
    public = {n for n in dir(helikon) if not n.startswith("_")}
    # submodules imported as a side effect of importing the package are not API
    modules = {n for n in public if type(getattr(helikon, n)).__name__ == "module"}
    assert set(helikon.__all__) - {"__version__"} == public - modules


def test_every_exported_name_resolves() -> None:
    for name in helikon.__all__:
        assert getattr(helikon, name) is not None, name


def test_native_module_ships_in_the_wheel() -> None:
    from helikon import _native

    assert _native.__version__ == helikon.__version__
