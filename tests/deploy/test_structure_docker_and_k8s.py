"""STRUCTURE CHECKS ONLY of the Docker and Kubernetes files: no Docker engine, no cluster and
no `helm` exist on the machine these tests run on, so nothing here builds an image, starts a
container or renders the chart. What they do prove: the files agree with each other and with
the code on the names, paths and versions a deployment depends on (a volume mounted at the
same path everywhere, every forwarded variable defined, the locked Dagster release, ...)."""

from __future__ import annotations

import importlib.util
import re
import tomllib

import pytest
import yaml

from bench_pipeline import settings
from tests.deploy.conftest import DEPLOY

DOCKER = DEPLOY / "docker"
K8S = DEPLOY / "k8s"
DAGSTER_SERVICES = ("user_code", "webserver", "daemon")


def _yaml(path):
    return yaml.safe_load(path.read_text())


@pytest.fixture(scope="module")
def compose() -> dict:
    return _yaml(DOCKER / "docker-compose.yaml")


@pytest.fixture(scope="module")
def docker_instance() -> dict:
    return _yaml(DOCKER / "dagster.yaml")


@pytest.fixture(scope="module")
def dockerfile() -> str:
    # Continuation lines joined, so that one instruction is one line.
    return (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")


def _env(dockerfile: str) -> dict[str, str]:
    """Every NAME=value set by the Dockerfile's ENV instructions."""
    pairs: dict[str, str] = {}
    for line in dockerfile.splitlines():
        if line.startswith("ENV "):
            pairs.update(re.findall(r"(\w+)=(\S+)", line))
    return pairs


def _locked_version(package: str) -> str:
    lock = tomllib.loads((settings.project_root() / "uv.lock").read_text())
    return next(p["version"] for p in lock["package"] if p["name"] == package)


def _mount(service: dict, target: str) -> str | None:
    """The source mounted at `target` in a compose service (short syntax)."""
    for volume in service.get("volumes", []):
        parts = volume.split(":")
        if parts[1] == target:
            return parts[0]
    return None


# --- the Dockerfile -------------------------------------------------------------------------


def test_structure_dockerfile_base_is_debian_python_311(dockerfile: str) -> None:
    base = re.search(r"^FROM (\S+)", dockerfile, re.MULTILINE).group(1)
    assert re.fullmatch(r"python:3\.11-slim-(bookworm|trixie)", base), base
    # The toolchain needs Node >= 20.19, which Debian 12 (bookworm) does not have.
    assert base.endswith("trixie")


def test_structure_dockerfile_installs_browser_sandbox_and_node_from_debian(
    dockerfile: str,
) -> None:
    install = next(line for line in dockerfile.splitlines() if "apt-get install" in line)
    for package in ("chromium", "bubblewrap", "nodejs", "npm", "util-linux"):
        assert re.search(rf"\b{package}\b", install), package


def test_structure_dockerfile_installs_the_locked_environment(dockerfile: str) -> None:
    lines = dockerfile.splitlines()
    syncs = [i for i, line in enumerate(lines) if "uv sync --frozen" in line]
    lock_copied = next(
        i for i, line in enumerate(lines) if line.startswith("COPY") and "uv.lock" in line
    )
    assert syncs and all(i > lock_copied for i in syncs)
    assert "npm ci --prefix toolchain" in dockerfile  # as scripts/setup.sh does
    assert "npm ci --prefix toolchain" in (settings.project_root() / "scripts/setup.sh").read_text()


def test_structure_dockerfile_installs_bytecode_as_setup_does(dockerfile: str) -> None:
    """No process in the image compiles at start: site-packages by uv, the project (an
    editable install) by compileall, as scripts/setup.sh does on a machine."""
    setup = (settings.project_root() / "scripts/setup.sh").read_text()
    assert "UV_COMPILE_BYTECODE=1" in dockerfile and "--compile-bytecode" in setup
    for text in (dockerfile, setup):
        assert re.search(r"-m compileall .*bench_pipeline.*assets.*resources", text)


def test_structure_dockerfile_launcher_libraries_match_the_locked_dagster(dockerfile: str) -> None:
    pinned = re.search(r"ARG DAGSTER_LIBS_VERSION=(\S+)", dockerfile).group(1)
    assert pinned == _locked_version("dagster-postgres")
    assert "dagster-docker==${DAGSTER_LIBS_VERSION}" in dockerfile
    assert "dagster-k8s==${DAGSTER_LIBS_VERSION}" in dockerfile


def test_structure_dockerfile_points_the_bot_at_debian_chromium(dockerfile: str) -> None:
    env = _env(dockerfile)
    assert env["BENCH_CHROMIUM"] == "/usr/bin/chromium"
    # ... which is the variable the bot reads (bench_pipeline/bot/browser.py).
    browser = (settings.project_root() / "bench_pipeline/bot/browser.py").read_text()
    assert 'os.environ.get("BENCH_CHROMIUM")' in browser


def test_structure_dockerfile_paths_are_the_shared_volume(dockerfile: str) -> None:
    env = _env(dockerfile)
    assert env["BENCH_DATA_DIR"] == "/data"
    assert env["BENCH_ARTIFACTS_DIR"].startswith("/data/")
    assert env["BENCH_WAREHOUSE"].startswith("/data/")
    assert env["DAGSTER_HOME"] == "/opt/dagster/dagster_home"


def test_structure_dockerignore_keeps_local_state_and_secrets_out() -> None:
    ignored = (DOCKER / "Dockerfile.dockerignore").read_text().split()
    for path in (".git", ".venv", "data", "dagster_home", "toolchain/node_modules"):
        assert path in ignored, path
    assert "deploy/docker/.env" in ignored
    assert ".env" in (DOCKER / ".gitignore").read_text().split()


# --- docker-compose.yaml, dagster.yaml, workspace.yaml -----------------------------------------


def test_structure_compose_has_postgres_code_server_webserver_and_daemon(compose: dict) -> None:
    assert {"postgres", "user_code", "webserver", "daemon"} <= set(compose["services"])
    command = compose["services"]["user_code"]["command"]
    assert command[:3] == ["dagster", "code-server", "start"]
    assert command[command.index("-m") + 1] == "bench_pipeline.definitions"
    assert command[command.index("-a") + 1] == "defs"


def test_structure_webserver_and_daemon_read_the_same_instance_and_workspace(
    compose: dict, dockerfile: str
) -> None:
    home = _env(dockerfile)["DAGSTER_HOME"]
    services = compose["services"]
    for name in (*DAGSTER_SERVICES, "pools"):
        assert _mount(services[name], f"{home}/dagster.yaml") == "./dagster.yaml", name
    for name in ("webserver", "daemon"):
        assert _mount(services[name], f"{home}/workspace.yaml") == "./workspace.yaml", name
        command = services[name]["command"]
        assert command[command.index("-w") + 1] == f"{home}/workspace.yaml", name
    assert (DOCKER / "dagster.yaml").is_file() and (DOCKER / "workspace.yaml").is_file()


def test_structure_workspace_points_at_the_code_server(compose: dict) -> None:
    (location,) = _yaml(DOCKER / "workspace.yaml")["load_from"]
    server = location["grpc_server"]
    assert server["host"] == "user_code" and server["host"] in compose["services"]
    command = compose["services"]["user_code"]["command"]
    assert str(server["port"]) == command[command.index("-p") + 1]


def test_structure_artifact_volume_is_at_the_same_path_in_code_server_and_run_containers(
    compose: dict, docker_instance: dict
) -> None:
    launcher = docker_instance["run_launcher"]["config"]
    run_mounts = dict(v.split(":")[:2] for v in launcher["container_kwargs"]["volumes"])
    data_dir = compose["x-bench-env"]["BENCH_DATA_DIR"]
    assert run_mounts == {"bench_data": data_dir}
    for name in DAGSTER_SERVICES:
        assert _mount(compose["services"][name], data_dir) == "bench_data", name
    # Compose must not prefix the volume with its project name, or the runs would get another.
    assert compose["volumes"]["bench_data"]["name"] == "bench_data"
    for key in ("BENCH_ARTIFACTS_DIR", "BENCH_WAREHOUSE"):
        assert compose["x-bench-env"][key].startswith(data_dir + "/")


def test_structure_run_containers_join_the_compose_network(
    compose: dict, docker_instance: dict
) -> None:
    network = docker_instance["run_launcher"]["config"]["network"]
    assert compose["networks"]["bench"]["name"] == network
    for name in ("postgres", *DAGSTER_SERVICES):
        assert compose["services"][name]["networks"] == ["bench"], name
    assert compose["x-bench-env"]["DAGSTER_PG_HOST"] == "postgres"


def test_structure_every_forwarded_variable_is_set_in_the_daemon(
    compose: dict, docker_instance: dict
) -> None:
    # DockerRunLauncher refuses to launch a run when one of them is missing in the daemon.
    daemon_env = compose["services"]["daemon"]["environment"]
    missing = set(docker_instance["run_launcher"]["config"]["env_vars"]) - set(daemon_env)
    assert not missing, missing


def test_structure_runs_use_the_code_servers_image_and_the_daemon_can_start_them(
    compose: dict,
) -> None:
    services = compose["services"]
    user_code = services["user_code"]
    assert user_code["environment"]["DAGSTER_CURRENT_IMAGE"] == user_code["image"]
    for name in ("webserver", "daemon", "pools"):
        assert services[name]["image"] == user_code["image"], name
    for name in ("webserver", "daemon"):
        assert _mount(services[name], "/var/run/docker.sock") == "/var/run/docker.sock"
    assert services["daemon"]["depends_on"]["pools"]["condition"] == (
        "service_completed_successfully"
    )
    assert services["pools"]["command"] == ["bench", "pools", "--file", "deploy/pools.yaml"]


def test_structure_pools_service_finds_bench_and_the_pools_file(
    compose: dict, dockerfile: str
) -> None:
    # `bench` is the project's entry point, installed by `uv sync` into /app/.venv/bin, which
    # the image puts first on PATH; the file's path is relative to the image's WORKDIR.
    scripts = tomllib.loads((settings.project_root() / "pyproject.toml").read_text())
    assert scripts["project"]["scripts"]["bench"] == "bench_pipeline.cli:app"
    workdir = re.findall(r"^WORKDIR (\S+)", dockerfile, re.MULTILINE)[-1]
    assert _env(dockerfile)["PATH"].split(":")[0] == f"{workdir}/.venv/bin"
    assert "working_dir" not in compose["services"]["pools"]
    file = compose["services"]["pools"]["command"][-1]
    assert (settings.project_root() / file).is_file()
    ignored = [
        line.strip()
        for line in (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert not any(file == i or file.startswith(i.rstrip("/") + "/") for i in ignored), ignored


def test_structure_ui_is_published_on_localhost_only(compose: dict) -> None:
    assert compose["services"]["webserver"]["ports"] == ["127.0.0.1:3000:3000"]


# --- Kubernetes -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def values() -> dict:
    return _yaml(K8S / "values.yaml")


def test_structure_k8s_values_run_each_run_in_a_pod_on_postgres(values: dict) -> None:
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["postgresql"]["postgresqlScheme"] == "postgresql+psycopg2"
    assert values["generatePostgresqlPasswordSecret"] is False
    assert values["postgresql"]["postgresqlPassword"] == ""  # the password is in a secret
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    assert deployment["codeServerArgs"] == ["-m", "bench_pipeline.definitions", "-a", "defs"]
    assert deployment["includeConfigInLaunchedRuns"]["enabled"] is True
    assert {"name": "bench-secrets"} in deployment["envSecrets"]


def test_structure_k8s_store_is_one_rwx_claim_at_the_same_path_everywhere(values: dict) -> None:
    pvc = _yaml(K8S / "pvc.yaml")
    assert pvc["kind"] == "PersistentVolumeClaim"
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    data_dir = deployment["env"]["BENCH_DATA_DIR"]
    # The code server's mounts reach run pods through includeConfigInLaunchedRuns.
    for owner in (deployment, values["dagsterWebserver"]):
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in owner["volumes"]}
        mounts = {m["name"]: m["mountPath"] for m in owner["volumeMounts"]}
        assert claims == {"bench-data": pvc["metadata"]["name"]}
        assert mounts == {"bench-data": data_dir}
    log_dir = values["computeLogManager"]["config"]["customComputeLogManager"]["config"]
    assert log_dir["base_dir"].startswith(data_dir + "/")


def test_structure_k8s_run_pods_get_shm_for_chromium_and_resource_requests(values: dict) -> None:
    run = values["runLauncher"]["config"]["k8sRunLauncher"]["runK8sConfig"]
    (shm,) = run["podSpecConfig"]["volumes"]
    assert shm["emptyDir"]["medium"] == "Memory"
    assert {"name": shm["name"], "mountPath": "/dev/shm"} in run["containerConfig"]["volumeMounts"]
    requests = run["containerConfig"]["resources"]["requests"]
    assert float(requests["cpu"]) >= 2  # two browsers of a bot_evaluation step
    assert "cpu" not in run["containerConfig"]["resources"].get("limits", {})


def test_structure_k8s_limits_match_the_team_instance(values: dict) -> None:
    team = _yaml(DEPLOY / "dagster.yaml")
    assert values["concurrency"]["enabled"] is True
    assert (
        values["concurrency"]["pools"]["defaultLimit"]
        == (team["concurrency"]["pools"]["default_limit"])
    )
    assert (
        values["concurrency"]["pools"]["granularity"] == team["concurrency"]["pools"]["granularity"]
    )
    assert (
        values["concurrency"]["runs"]["maxConcurrentRuns"]
        == (team["concurrency"]["runs"]["max_concurrent_runs"])
    )
    daemon = values["dagsterDaemon"]
    assert daemon["runCoordinator"]["type"] == "QueuedRunCoordinator"
    assert daemon["runRetries"]["maxRetries"] == team["run_retries"]["max_retries"]
    assert daemon["runMonitoring"]["enabled"] is True
    assert (
        daemon["runMonitoring"]["maxRuntimeSeconds"]
        == (team["run_monitoring"]["max_runtime_seconds"])
    )
    assert values["telemetry"]["enabled"] is False


@pytest.mark.skipif(
    importlib.util.find_spec("dagster_k8s") is None,
    reason="dagster-k8s is not installed in the project's .venv (the image installs it; see "
    "deploy/docker/Dockerfile) - only the values' structure is checked here",
)
def test_k8s_run_pod_spec_builds_with_the_k8s_run_launcher_library(values: dict) -> None:
    """Not a structure check: dagster-k8s builds the Job of a run pod from these values."""
    from dagster_k8s.job import (
        DagsterK8sJobConfig,
        UserDefinedDagsterK8sConfig,
        construct_dagster_k8s_job,
    )

    (deployment,) = values["dagster-user-deployments"]["deployments"]
    run = values["runLauncher"]["config"]["k8sRunLauncher"]["runK8sConfig"]
    user_config = UserDefinedDagsterK8sConfig.from_dict(
        {
            "container_config": run["containerConfig"],
            "pod_spec_config": run["podSpecConfig"],
            "job_spec_config": run["jobSpecConfig"],
        }
    )
    # What includeConfigInLaunchedRuns passes on from the code server's deployment.
    job_config = DagsterK8sJobConfig(
        job_image="registry.example.com/bench-pipeline:abc",
        dagster_home="/opt/dagster/dagster_home",
        instance_config_map="bench-dagster-instance",
        env_secrets=[s["name"] for s in deployment["envSecrets"]],
        volume_mounts=deployment["volumeMounts"],
        volumes=deployment["volumes"],
    )
    job = construct_dagster_k8s_job(
        job_config, ["dagster", "api", "execute_run"], "dagster-run-1", user_config
    )
    pod = job.spec.template.spec
    (container,) = pod.containers
    assert {v.name for v in pod.volumes} == {"bench-data", "dshm"}
    mounts = {m.name: m.mount_path for m in container.volume_mounts}
    assert mounts == {"bench-data": "/data", "dshm": "/dev/shm"}
    assert container.security_context.privileged is True
    assert container.resources.requests == {"cpu": "3", "memory": "6Gi"}
    assert "bench-secrets" in [e.secret_ref.name for e in container.env_from if e.secret_ref]
    assert job.spec.ttl_seconds_after_finished == 86400
