# Job-level rules (issue 20.6): every refusal of api/job_validation.cc outside the pod template,
# and its neighbours that should pass. `job`, `s`, `ps` come from try_cases.py.
def spec(**kw):
    def m(j):
        j["spec"].update(kw)
    return m

def task(**kw):
    def m(j):
        j["spec"]["tasks"][0].update(kw)
    return m

def tasks(*items, **kw):
    def m(j):
        base = j["spec"]["tasks"][0]
        j["spec"]["tasks"] = [dict(copy.deepcopy(base), **t) for t in items]
        j["spec"].update(kw)
    return m

def pol(*policies, where=spec):
    return where(policies=list(policies))

case("base", job())
# Lifecycle policies
case("policy events repeated in one policy", job(pol({"events": ["PodEvicted", "PodFailed", "PodEvicted"], "action": "RestartJob"})))
case("policy event and events name the same", job(pol({"event": "PodFailed", "events": ["PodFailed"], "action": "RestartJob"})))
case("policy event repeated across policies", job(pol({"event": "PodFailed", "action": "RestartJob"}, {"event": "PodFailed", "action": "AbortJob"})))
case("policy events overlap across policies", job(pol({"events": ["PodEvicted", "PodFailed"], "action": "RestartJob"}, {"events": ["PodFailed"], "action": "AbortJob"})))
case("policy * with another event in one policy", job(pol({"events": ["*", "PodFailed"], "action": "RestartJob"})))
case("policy * and another policy", job(pol({"event": "*", "action": "RestartJob"}, {"event": "PodFailed", "action": "AbortJob"})))
case("policy * alone", job(pol({"event": "*", "action": "RestartJob"})))
case("policy * repeated in one policy", job(pol({"events": ["*", "*"], "action": "RestartJob"})))
case("policy unknown event", job(pol({"event": "PodExploded", "action": "RestartJob"})))
case("policy internal event OutOfSync", job(pol({"event": "OutOfSync", "action": "RestartJob"})))
case("policy event JobUpdated", job(pol({"event": "JobUpdated", "action": "RestartJob"})))
case("policy unknown action", job(pol({"event": "PodFailed", "action": "Explode"})))
case("policy internal action SyncJob", job(pol({"event": "PodFailed", "action": "SyncJob"})))
case("policy action EnqueueJob", job(pol({"event": "PodFailed", "action": "EnqueueJob"})))
case("policy action ResumeJob", job(pol({"event": "PodFailed", "action": "ResumeJob"})))
case("policy no action", job(pol({"event": "PodFailed"})))
case("policy neither event nor exitCode", job(pol({"action": "RestartJob"})))
case("policy event and exitCode", job(pol({"event": "PodFailed", "exitCode": 3, "action": "RestartJob"})))
case("policy exitCode 0", job(pol({"exitCode": 0, "action": "RestartJob"})))
case("policy exitCode repeated", job(pol({"exitCode": 3, "action": "RestartJob"}, {"exitCode": 3, "action": "AbortJob"})))
case("policy exitCode -1", job(pol({"exitCode": -1, "action": "RestartJob"})))
case("policy exitCode 256", job(pol({"exitCode": 256, "action": "RestartJob"})))
case("policy timeout -1s", job(pol({"event": "PodFailed", "action": "RestartJob", "timeout": "-1s"})))
case("task policy events repeated", job(pol({"events": ["PodFailed", "PodFailed"], "action": "RestartTask"}, where=task)))
case("task policy event repeated across policies", job(pol({"event": "PodFailed", "action": "RestartTask"}, {"event": "PodFailed", "action": "AbortJob"}, where=task)))
case("task and job policy on one event", job(lambda j: (pol({"event": "PodFailed", "action": "RestartTask"}, where=task)(j), pol({"event": "PodFailed", "action": "AbortJob"})(j))))
case("task policy unknown event", job(pol({"event": "Nope", "action": "RestartTask"}, where=task)))
case("task policy exitCode 0", job(pol({"exitCode": 0, "action": "RestartTask"}, where=task)))
# Job-level numbers
case("minAvailable -1", job(spec(minAvailable=-1)))
case("minAvailable 0", job(spec(minAvailable=0)))
case("minAvailable above replicas", job(spec(minAvailable=2)))
case("maxRetry -1", job(spec(maxRetry=-1)))
case("maxRetry 0", job(spec(maxRetry=0)))
case("ttlSecondsAfterFinished -1", job(spec(ttlSecondsAfterFinished=-1)))
case("minSuccess 0", job(spec(minSuccess=0)))
case("minSuccess -1", job(spec(minSuccess=-1)))
case("minSuccess above replicas", job(spec(minSuccess=5)))
case("no tasks", job(spec(tasks=[])))
case("queue missing", job(spec(queue="nope")))
case("queue root", job(spec(queue="root")))
case("priorityClassName missing", job(spec(priorityClassName="no-such-class")))
case("schedulerName other", job(spec(schedulerName="default-scheduler")))
case("job name with dot", job(name="a.b"))
case("job name 60 chars", job(name="j" * 60))
case("job name 64 chars", job(name="j" * 64))
# Tasks
case("task replicas -1", job(lambda j: (task(replicas=-1)(j), spec(minAvailable=0)(j))))
case("task replicas 0", job(lambda j: (task(replicas=0)(j), spec(minAvailable=0)(j))))
case("task minAvailable -1", job(task(minAvailable=-1)))
case("task minAvailable above replicas", job(task(minAvailable=2)))
case("task maxRetry -1", job(task(maxRetry=-1)))
case("task name empty", job(task(name="")))
case("task name Bad_Name", job(task(name="Bad_Name")))
case("task name 64 chars", job(task(name="t" * 64)))
case("pod name too long", job(lambda j: (task(name="t" * 40)(j), s(lambda j, v: j["metadata"].update(name=v), "j" * 30)(j))))
case("duplicate task names", job(tasks({"name": "a"}, {"name": "a"})))
case("topologyPolicy best-effort", job(task(topologyPolicy="best-effort")))
case("topologyPolicy single-numa-node without cpu", job(task(topologyPolicy="single-numa-node")))
case("topologyPolicy foo", job(task(topologyPolicy="foo")))
case("dependsOn unknown task", job(task(dependsOn={"name": ["nope"]})))
case("dependsOn itself", job(task(dependsOn={"name": ["t"]})))
case("dependsOn cycle", job(tasks({"name": "a", "dependsOn": {"name": ["b"]}}, {"name": "b", "dependsOn": {"name": ["a"]}}, minAvailable=2)))
case("dependsOn iteration foo", job(tasks({"name": "a"}, {"name": "b", "dependsOn": {"name": ["a"], "iteration": "foo"}}, minAvailable=2)))
case("partitionPolicy totalPartitions 0", job(task(partitionPolicy={"totalPartitions": 0, "partitionSize": 1})))
case("partitionPolicy replicas mismatch", job(task(partitionPolicy={"totalPartitions": 2, "partitionSize": 2})))
case("partitionPolicy minPartitions above total", job(task(replicas=2, partitionPolicy={"totalPartitions": 2, "partitionSize": 1, "minPartitions": 3})))
case("partitionPolicy ok", job(task(replicas=4, partitionPolicy={"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1})))
# Plugins
case("plugin unknown", job(spec(plugins={"nope": []})))
case("plugin ray", job(spec(plugins={"ray": []})))
case("plugin hcclrank", job(spec(plugins={"hcclrank": []})))
case("plugin mpi without master task", job(spec(plugins={"mpi": []})))
case("plugin mpi with --master=t", job(spec(plugins={"mpi": ["--master=t"]})))
case("plugin pytorch without master task", job(spec(plugins={"pytorch": []})))
case("plugin tensorflow", job(spec(plugins={"tensorflow": []})))
case("plugin svc unknown argument", job(spec(plugins={"svc": ["--nope"]})))
case("plugin ssh", job(spec(plugins={"ssh": []})))
# Volumes
case("volume without mountPath", job(spec(volumes=[{"volumeClaimName": "c"}])))
case("volume mountPath with colon", job(spec(volumes=[{"mountPath": "/a:b", "volumeClaimName": "c"}])))
case("volume duplicate mountPath", job(spec(volumes=[{"mountPath": "/a", "volumeClaimName": "c"}, {"mountPath": "/a", "volumeClaimName": "d"}])))
case("volume neither claim nor name", job(spec(volumes=[{"mountPath": "/a"}])))
case("volume both claim and name", job(spec(volumes=[{"mountPath": "/a", "volumeClaimName": "c", "volumeClaim": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])))
case("volume claim name Bad_Name", job(spec(volumes=[{"mountPath": "/a", "volumeClaimName": "Bad_Name"}])))
# Network topology
case("networkTopology mode foo", job(spec(networkTopology={"mode": "foo"})))
case("networkTopology tier -1", job(spec(networkTopology={"mode": "hard", "highestTierAllowed": -1})))
