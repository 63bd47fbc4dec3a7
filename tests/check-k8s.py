#!/usr/bin/env python3
"""check-k8s.py DIR - the shape of contrib/kubernetes/: every document
has apiVersion, kind and a name; the Indexed Job maps JOB_COMPLETION_INDEX
to --shard, reads what it audits from the run's manifest (never from
values pasted in), has a probe mode, asks for the memory the key
derivation needs, mounts the snapshot read-only and never the store; the
CronJob's driver checks the key pair, takes the lock, runs the probe,
snapshots, writes the manifest, creates the job, waits, imports, writes
its status, in that order, and prints the workers' reports.  No cluster
needed (python3-yaml).  Prints one line per problem and exits 1 when
there is one."""
import re
import sys

import yaml

problems = []


def need(cond, what):
    if not cond:
        problems.append(what)


def get(d, *path):
    for p in path:
        if isinstance(d, dict):
            d = d.get(p)
        elif isinstance(d, list) and isinstance(p, int) and p < len(d):
            d = d[p]
        else:
            return None
    return d


def pod_checks(spec, where):
    need(isinstance(spec, dict), where + ": no pod spec")
    if not isinstance(spec, dict):
        return []
    need(spec.get("restartPolicy") in ("Never", "OnFailure"),
         where + ": restartPolicy must be Never or OnFailure in a Job")
    cs = spec.get("containers") or []
    need(len(cs) >= 1, where + ": no container")
    vols = {v.get("name") for v in spec.get("volumes") or []}
    for c in cs:
        need(c.get("name") and c.get("image"), where + ": a container without name or image")
        for m in c.get("volumeMounts") or []:
            need(m.get("name") in vols, where + ": mount of unknown volume " + str(m.get("name")))
    return cs


def script(c):
    return " ".join((c.get("command") or []) + (c.get("args") or []))


def main(d):
    docs = []
    for f in ("rebuild-audit-shards.yaml", "rebuild-audit-nightly.yaml"):
        with open(d + "/" + f) as fh:
            for doc in yaml.safe_load_all(fh):
                if doc is not None:
                    docs.append((f, doc))
    for f, doc in docs:
        need(isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str),
             f + ": a document without apiVersion or kind")
        need(bool(get(doc, "metadata", "name")), f + ": a document without metadata.name")
    kinds = {doc["kind"]: doc for _, doc in docs}
    job = kinds.get("Job")
    need(job is not None, "no Job")
    if job:
        s = job["spec"]
        need(job["apiVersion"] == "batch/v1", "Job: apiVersion batch/v1")
        need(s.get("completionMode") == "Indexed", "Job: completionMode Indexed")
        need(isinstance(s.get("completions"), int) and s["completions"] >= 1, "Job: completions")
        need(isinstance(s.get("parallelism"), int), "Job: parallelism")
        cs = pod_checks(get(s, "template", "spec"), "Job")
        for c in cs:
            t = script(c)
            env = {e["name"]: e.get("value") for e in c.get("env") or []}
            need("$JOB_COMPLETION_INDEX/$RBA_SHARDS" in t, "Job: --shard from JOB_COMPLETION_INDEX")
            need(env.get("RBA_SHARDS") == str(s.get("completions")),
                 "Job: RBA_SHARDS equals completions")
            for w in ("audit --all", "--shard", "--records-out", "-k ", "--head"):
                need(w in t, "Job: the worker command lacks " + w)
            need("/manifest" in t and '--head "$(mf head)"' in t,
                 "Job: the worker reads the head from the run's manifest")
            need("HEAD" not in env.values(), "Job: no head pasted into the manifest")
            need("RBA_PROBE" in env and "keygen --check" in t,
                 "Job: a probe mode that checks the key pair")
            mem = str(get(c, "resources", "requests", "memory") or "")
            need(mem.endswith("Mi") and mem[:-2].isdigit() and int(mem[:-2]) >= 1536 or
                 mem.endswith("Gi") and mem[:-2].isdigit() and int(mem[:-2]) >= 2,
                 "Job: a memory request of 1536Mi or more (the key derivation)")
            mounts = {m["mountPath"]: m for m in c.get("volumeMounts") or []}
            need(get(mounts, "/shared", "readOnly") is True, "Job: the snapshot is mounted read-only")
            need("-S \"/shared/" in t, "Job: the worker reads the read-only mount")
            need("/records/" in t and "/records" in mounts, "Job: records go to the writable mount")
            need("store" not in {m["name"] for m in c.get("volumeMounts") or []},
                 "Job: a worker never mounts the store")
    cron = kinds.get("CronJob")
    need(cron is not None, "no CronJob")
    if cron:
        s = cron["spec"]
        need(cron["apiVersion"] == "batch/v1", "CronJob: apiVersion batch/v1")
        need(re.fullmatch(r"\S+ \S+ \S+ \S+ \S+", s.get("schedule", "")) is not None,
             "CronJob: a five-field schedule")
        need(s.get("concurrencyPolicy") == "Forbid", "CronJob: concurrencyPolicy Forbid")
        pod = get(s, "jobTemplate", "spec", "template", "spec")
        cs = pod_checks(pod, "CronJob")
        sa = (pod or {}).get("serviceAccountName")
        need(sa and any(doc["kind"] == "ServiceAccount" and doc["metadata"]["name"] == sa
                        for _, doc in docs), "CronJob: its ServiceAccount is defined")
        for c in cs:
            t = script(c)
            steps = ("keygen --check", 'mkdir "$lock"', "RBA_PROBE", "store snapshot",
                     '"$d/manifest"', "job_yaml | kubectl create", "kubectl wait --for=condition=complete --timeout=60s",
                     "history import", 'kubectl logs -l "job-name=$job"', '"$d/status"')
            order = [t.find(w) for w in steps]
            need(all(i >= 0 for i in order) and order == sorted(order),
                 "CronJob: key check, lock, probe, snapshot, manifest, create the job, wait, "
                 "import, the workers' reports, status, in that order")
            need("-p " in t, "CronJob: import with the worker public key")
    role = kinds.get("Role")
    need(role is not None and any("jobs" in r.get("resources", []) and "create" in r.get("verbs", [])
                                  for r in role.get("rules", [])), "Role: may create jobs")
    need(role is not None and any("pods/log" in r.get("resources", []) and "get" in r.get("verbs", [])
                                  for r in role.get("rules", [])), "Role: may read the workers' logs")
    for p in problems:
        print("check-k8s: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
