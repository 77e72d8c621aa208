"""`make_router` builds what the profile names, and refuses what it cannot build."""
import pytest

from models.config import load_config
from models.routing import ClassifierRouter, LLMRouter, make_router
from models.routing.config import RoutingConfig
from models.types import Query
from tests.stand_ins import ServesAnyAdapter


class OneWordGenerator(ServesAnyAdapter):
    def generate(self, requests, *, deadline=None):
        return ["finance"] * len(requests)


def test_llm_kind():
    router = make_router(RoutingConfig(kind="llm", max_new_tokens=3), generator=OneWordGenerator())
    assert isinstance(router, LLMRouter) and router.max_new_tokens == 3
    assert router.route([Query("a", "what is the eps of nvda?")]) == ["finance"]


def test_classifier_kind_trains_its_artefact_on_first_use(tmp_path, hash_embedder):
    cfg = RoutingConfig(kind="classifier", classifier_path=str(tmp_path / "router.joblib"), estimator="svm")
    router = make_router(cfg, generator=None, embedder=hash_embedder())
    assert isinstance(router, ClassifierRouter) and (tmp_path / "router.joblib").exists()
    assert router.route([Query("a", "what is the dividend yield of verizon stock?")]) == ["finance"]


def test_profiles_name_buildable_routers():
    assert load_config("cpu").routing.kind == "classifier"
    assert load_config("g4dn").routing.kind == "llm"
    assert load_config("cpu").routing.classifier_path.startswith(".cache/")  # nothing binary in git


@pytest.mark.parametrize("cfg, parts, message", [
    (RoutingConfig(kind="svm"), {}, "unknown routing.kind"),
    (RoutingConfig(kind="llm"), {}, "needs a generator"),
    (RoutingConfig(kind="classifier"), {"generator": OneWordGenerator()}, "needs an embedder"),
])
def test_bad_configs(cfg, parts, message):
    with pytest.raises(ValueError, match=message):
        make_router(cfg, **parts)
