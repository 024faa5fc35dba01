"""The exact commands that export, then delete, one retained item (tools/operations/retained.py), per cloud.

Exports come first and never destroy anything; deletes are printed only once the stack's retention
period has passed (tools/operations/offboard.py decides). Names come from the plan's inputs (secret ids,
Kubernetes names) or the stack outputs (instances, keys); `$EXPORT_BUCKET` (gcp) and `$ADMIN_USER`
(shared instances) are the operator's to set, and the header of the listing says so.

Exports that carry secret values (a secret's value, a Kubernetes Secret, a namespace's objects,
which include its Secrets) are piped through `gpg --encrypt` to `$EXPORT_RECIPIENT` by default, so
no secret lands in a plaintext file unless the operator asks for it (`--plaintext-secrets`).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from components.model.settings.stack import StackSettings
from tools.operations.retained import RetainedItem
from tools.plan.harness import RecordedResource

# Resource types that hold a whole database server of its own (dedicated placement).
_INSTANCES = (
    "sql/databaseInstance:DatabaseInstance",
    "rds/instance:Instance",
    "postgresql.cnpg.io/v1:Cluster",
    "k8s.mariadb.com/v1alpha1:MariaDB",
)


@dataclass(frozen=True)
class Commands:
    """Shell commands for one item: export (safe any time) and delete (after retention)."""

    export: list[str]
    delete: list[str]


def _q(value: object) -> str:
    return shlex.quote(str(value))


# Where an export that carries secret values writes: a file name -> the end of the command.
SecretSink = Callable[[str], str]


def encrypted(path: str) -> str:
    """The default: only ciphertext reaches the disk (`gpg --decrypt FILE` reads it back)."""
    return f'| gpg --encrypt --recipient "$EXPORT_RECIPIENT" --output {_q(path + ".gpg")}'


def plaintext(path: str) -> str:
    """Only with `--plaintext-secrets`: the value as it is, in a file."""
    return f"> {_q(path)}"


def _file(item: RetainedItem, suffix: str) -> str:
    return f"{item.tenant}-{item.environment or 'all'}-{item.name}{suffix}".replace("_", "-")


def _kubectl_objects(resources: list[RecordedResource], sink: SecretSink = encrypted) -> Commands:
    """Export and delete Kubernetes objects by kind and name (`clusters.postgresql.cnpg.io pg-orders`);
    a Secret's export goes to `sink`."""
    export, delete = [], []
    for resource in resources:
        if not resource.type.startswith("kubernetes:") or "metadata" not in resource.inputs:
            continue
        meta, kind = resource.inputs["metadata"], resource.inputs["kind"]
        group = resource.inputs["apiVersion"].rpartition("/")[0]
        plural = f"{kind.lower()}s" + (f".{group}" if group else "")
        where = f"-n {_q(meta['namespace'])} " if meta.get("namespace") else ""
        saved = f"{meta.get('namespace') or 'cluster'}-{kind.lower()}-{meta['name']}.yaml"
        to = sink(saved) if (group, kind) == ("", "Secret") else f"> {_q(saved)}"
        export.append(f"kubectl {where}get {plural} {_q(meta['name'])} -o yaml {to}")
        delete.append(f"kubectl {where}delete {plural} {_q(meta['name'])}")
    return Commands(export, delete)


def _input(item: RetainedItem, type_suffix: str, key: str) -> str:
    found = item.of_type(type_suffix)
    return str(found[0].inputs[key]) if found else f"<{item.name}: no {type_suffix} in plan>"


def gcp_commands(item: RetainedItem, settings: StackSettings, sink: SecretSink = encrypted) -> Commands:
    project = _q(settings.gcp.project if settings.gcp else "<project>")
    if item.kind == "key":
        versions = (
            f"gcloud kms keys versions list --key={_q(item.name)} "
            "--filter='state=ENABLED OR state=DISABLED' --format='value(name)'"
        )
        return Commands([], [f"{versions} | xargs -r -n1 gcloud kms keys versions destroy --quiet"])
    if item.kind not in ("secret", "database"):
        return _kubectl_objects(item.resources, sink)
    secret = _q(_input(item, "secretmanager/secret:Secret", "secretId"))
    secret_cmds = Commands(
        [f"gcloud secrets versions access latest --secret={secret} --project={project} {sink(_file(item, '.txt'))}"],
        [f"gcloud secrets delete {secret} --project={project} --quiet"],
    )
    if item.kind == "secret":
        return secret_cmds
    return _merge(_gcp_database(item, project), secret_cmds)


def _gcp_database(item: RetainedItem, project: str) -> Commands:
    facts = item.facts
    instance, database = _q(str(facts["instance"]).rsplit(":", 1)[-1]), _q(facts["database"])
    where = f"--instance={instance} --project={project} --quiet"
    export = [
        f'gcloud sql export sql {instance} "$EXPORT_BUCKET"/{_file(item, ".sql.gz")} '
        f"--database={database} --project={project}"
    ]
    if item.of_type(*_INSTANCES):
        return Commands(
            export,
            [
                f"gcloud sql instances patch {instance} --no-deletion-protection --project={project}",
                f"gcloud sql instances delete {instance} --project={project} --quiet",
            ],
        )
    host = " --host=%" if facts.get("port") == 3306 else ""
    return Commands(
        export,
        [
            f"gcloud sql databases delete {database} {where}",
            f"gcloud sql users delete {_q(facts['username'])}{host} {where}",
        ],
    )


def aws_commands(item: RetainedItem, settings: StackSettings, sink: SecretSink = encrypted) -> Commands:
    if item.kind == "security-group":
        return _aws_security_group(item, settings)
    if item.kind == "key":
        # The alias is kept with the key (components/clouds/aws/data.py); it goes first, so the
        # tenant's name is free again (a key pending deletion keeps an alias until it is deleted).
        aliases = [
            f"aws kms delete-alias --alias-name {_q(str(r.inputs['name']))}" for r in item.of_type("kms/alias:Alias")
        ]
        return Commands(
            [], [*aliases, f"aws kms schedule-key-deletion --key-id {_q(item.name)} --pending-window-in-days 30"]
        )
    if item.kind not in ("secret", "database"):
        return _kubectl_objects(item.resources, sink)
    secret = _q(_input(item, "secretsmanager/secret:Secret", "name"))
    value = f"aws secretsmanager get-secret-value --secret-id {secret} --query SecretString --output text"
    days = settings.data.secret_recovery_days
    secret_cmds = Commands(
        [f"{value} {sink(_file(item, '.json'))}"],
        [f"aws secretsmanager delete-secret --secret-id {secret} --recovery-window-in-days {days}"],
    )
    return secret_cmds if item.kind == "secret" else _merge(_aws_database(item), secret_cmds)


def _aws_database(item: RetainedItem) -> Commands:
    facts = item.facts
    instance, database = _q(facts["instance"]), _q(facts["database"])
    if item.of_type(*_INSTANCES):
        final = _q(f"{facts['instance']}-final")
        return Commands(
            [
                f"aws rds create-db-snapshot --db-instance-identifier {instance} "
                f"--db-snapshot-identifier {_q(str(facts['instance']) + '-offboard')}"
            ],
            [
                f"aws rds modify-db-instance --db-instance-identifier {instance} "
                "--no-deletion-protection --apply-immediately",
                f"aws rds delete-db-instance --db-instance-identifier {instance} "
                f"--final-db-snapshot-identifier {final}",
            ],
        )
    host, port, name, user = _q(facts["host"]), facts["port"], facts["database"], facts["username"]
    if port == 3306:
        login = f'-h {host} -P {port} -u "$ADMIN_USER" -p'
        drop = f"DROP DATABASE `{name}`; DROP USER `{user}`@`%`;"
        return Commands(
            [f"mysqldump {login} --single-transaction {database} > {_q(_file(item, '.sql'))}"],
            [f"mysql {login} -e {_q(drop)}"],
        )
    login = f'-h {host} -p {port} -U "$ADMIN_USER"'
    drop_database, drop_role = f'DROP DATABASE "{name}"', f'DROP ROLE "{user}"'
    return Commands(
        [f"pg_dump {login} -Fc -d {database} > {_q(_file(item, '.dump'))}"],
        [f"psql {login} -d postgres -c {_q(drop_database)} -c {_q(drop_role)}"],
    )


def _aws_security_group(item: RetainedItem, settings: StackSettings) -> Commands:
    """Delete an environment's database group once its instances are deleted (RDS deletes them
    asynchronously; the group is refused while one still uses it: DependencyViolation). The group
    is autonamed, so it is found by the tags and name prefix the program gave it."""
    (group,) = item.resources
    tags = group.inputs.get("tags") or {}
    filters = [f"Name=group-name,Values={item.name}-*"]
    if settings.aws is not None and settings.aws.vpc_id:
        filters.append(f"Name=vpc-id,Values={settings.aws.vpc_id}")
    filters += [f"Name=tag:{key},Values={tags[key]}" for key in ("tenant", "environment") if key in tags]
    find = (
        f"aws ec2 describe-security-groups --filters {' '.join(_q(f) for f in filters)} "
        "--query 'SecurityGroups[].GroupId' --output text"
    )
    waits = [f"aws rds wait db-instance-deleted --db-instance-identifier {_q(i)}" for i in item.facts["instances"]]
    return Commands([], [*waits, f"{find} | xargs -r -n1 aws ec2 delete-security-group --group-id"])


def _merge(*parts: Commands) -> Commands:
    return Commands([c for p in parts for c in p.export], [c for p in parts for c in p.delete])


def local_commands(item: RetainedItem, settings: StackSettings, sink: SecretSink = encrypted) -> Commands:
    objects = _kubectl_objects(item.resources, sink)
    if item.kind != "database":
        if item.kind == "namespace":
            everything = "all,configmaps,secrets,persistentvolumeclaims"
            return Commands(
                [f"kubectl get {everything} -n {_q(item.name)} -o yaml {sink(item.name + '.yaml')}"],
                [f"kubectl delete namespace {_q(item.name)}"],
            )
        return objects
    instance, database = str(item.facts["instance"]), _q(item.facts["database"])
    namespace = _q(_database_namespace(item, settings))
    if item.facts.get("port") == 5432:
        dump = f"kubectl -n {namespace} exec {_q(instance + '-1')} -c postgres -- pg_dump -Fc {database}"
        return Commands([f"{dump} > {_q(_file(item, '.dump'))}", *objects.export], objects.delete)
    pod, name, user = _q(instance + "-0"), item.facts["database"], item.facts["username"]
    root = 'mariadb-dump -uroot -p"$MARIADB_ROOT_PASSWORD"'
    dump = f"kubectl -n {namespace} exec {pod} -c mariadb -- sh -c {_q(f'exec {root} {name}')}"
    delete = list(objects.delete)
    if not item.of_type(*_INSTANCES):
        # On a shared MariaDB the Database and User objects skip cleanup: drop them in the server too.
        drop = shlex.quote(f"DROP DATABASE `{name}`; DROP USER `{user}`@`%`;")
        sql = f'exec mariadb -uroot -p"$MARIADB_ROOT_PASSWORD" -e {drop}'
        delete.append(f"kubectl -n {namespace} exec {pod} -c mariadb -- sh -c {_q(sql)}")
    return Commands([f"{dump} > {_q(_file(item, '.sql'))}", *objects.export], delete)


def _database_namespace(item: RetainedItem, settings: StackSettings) -> str:
    """Where an in-cluster database runs: its tenant namespace, or the shared instances' namespace."""
    if item.of_type(*_INSTANCES):
        return f"tenant-{item.tenant}-{item.environment}"
    return settings.data.shared_instances_namespace


BUILDERS: dict[str, Callable[[RetainedItem, StackSettings, SecretSink], Commands]] = {
    "gcp": gcp_commands,
    "aws": aws_commands,
    "local": local_commands,
}


def commands_for(item: RetainedItem, settings: StackSettings, plaintext_secrets: bool = False) -> Commands:
    """The export and delete commands of one item on the stack's cloud; none for unattributed ones.
    Secret values are exported encrypted unless `plaintext_secrets` (the operator's explicit flag)."""
    if item.kind == "unattributed":
        return Commands([], [])
    return BUILDERS[settings.cloud](item, settings, plaintext if plaintext_secrets else encrypted)
