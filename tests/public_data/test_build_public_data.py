"""The build command (`scripts/build_public_data.py`): CSV folder -> a store the pathway can read."""
from models.paths import resolve_repo_path
from models.public_data import PublicStore
from scripts.build_public_data import main


def test_main_builds_a_readable_store_and_reports(tmp_path, capsys):
    out = tmp_path / "public.sqlite"
    main(["--src", str(resolve_repo_path("data/public")), "--out", str(out)])
    assert f"wrote {out}: " in capsys.readouterr().out
    assert PublicStore(out).exact("finance", "msft")
