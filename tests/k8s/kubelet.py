#!/usr/bin/python3
"""A stand-in for the kubelet's device manager, for the device plugin's
tests: what the kubelet does with a device plugin, in its order, over
gRPC with Debian's python3-grpcio and stubs protoc makes from
src/k8s/deviceplugin.proto.

    kubelet.py DIR STUBS

serves Registration on DIR/kubelet.sock.  On Register it checks the
version and the resource name, dials DIR/<endpoint>, calls
GetDevicePluginOptions and reads ListAndWatch, each update into
DIR/devices.json.  It prints a transcript, one line a step, and takes
commands as files DIR/cmd/NAME.json, answering each in DIR/cmd/NAME.out:

    {"op": "allocate", "size": N}      GetPreferredAllocation over the
                                       healthy units no container holds,
                                       then Allocate of what it gave
    {"op": "preferred", "size": N, "must": [..]}
                                       GetPreferredAllocation alone, with
                                       these IDs the pod must have
    {"op": "allocate_ids", "ids": [..]} Allocate of these, as they are
    {"op": "release", "ids": [..]}     the container is gone
    {"op": "restart"}                  the kubelet starts again: its
                                       socket removed and made anew
    {"op": "pods", "pods": [..]}       what PodResources' List answers
                                       (DIR/pod-resources.sock)
"""
import json
import os
import sys
import threading
import time
from concurrent import futures

import grpc

DIR, STUBS = sys.argv[1], sys.argv[2]
sys.path.insert(0, STUBS)
import deviceplugin_pb2 as pb  # noqa: E402
import deviceplugin_pb2_grpc as pbg  # noqa: E402
import podresources_pb2 as pr  # noqa: E402
import podresources_pb2_grpc as prg  # noqa: E402
from google.protobuf import json_format  # noqa: E402

lock = threading.Lock()
state = {"plugin": None, "devices": {}, "held": set(), "registrations": 0,
         "pods": []}


def say(*words):
    with lock:
        print(" ".join(str(w) for w in words), flush=True)


def write_json(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f, sort_keys=True)
    os.replace(path + ".tmp", path)


def watch(stub, epoch):
    """Reads ListAndWatch until the stream ends or a new plugin comes."""
    try:
        for update in stub.ListAndWatch(pb.Empty()):
            devices = {d.ID: d.health for d in update.devices}
            with lock:
                if state["epoch"] != epoch:
                    return
                state["devices"] = devices
                write_json(os.path.join(DIR, "devices.json"), devices)
            healthy = sum(1 for h in devices.values() if h == "Healthy")
            say("ListAndWatch:", len(devices), "devices,", healthy, "Healthy,",
                len(devices) - healthy, "Unhealthy")
    except grpc.RpcError as e:
        say("ListAndWatch ended:", e.code().name)


class Registration(pbg.RegistrationServicer):
    def Register(self, request, context):
        say("Register: version", request.version, "endpoint",
            request.endpoint, "resource", request.resource_name,
            "preferred",
            request.options.get_preferred_allocation_available)
        if request.version != "v1beta1":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "unsupported version " + request.version)
        name = request.resource_name
        if "/" not in name or name.startswith("kubernetes.io/"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "invalid resource name " + name)
        # As the device manager does: the plugin is dialed once Register
        # has returned, in its own goroutine.
        threading.Thread(target=dial, args=(request,), daemon=True).start()
        return pb.Empty()


def dial(request):
    time.sleep(0.05)
    channel = grpc.insecure_channel(
        "unix://" + os.path.join(DIR, request.endpoint))
    stub = pbg.DevicePluginStub(channel)
    options = stub.GetDevicePluginOptions(pb.Empty(), timeout=10)
    say("GetDevicePluginOptions: pre_start_required",
        options.pre_start_required, "get_preferred_allocation_available",
        options.get_preferred_allocation_available)
    with lock:
        state["registrations"] += 1
        state["epoch"] = state["registrations"]
        state["plugin"] = stub
        epoch = state["epoch"]
        write_json(os.path.join(DIR, "registrations"),
                   state["registrations"])
    watch(stub, epoch)


class PodResources(prg.PodResourcesListerServicer):
    def List(self, request, context):
        out = pr.ListPodResourcesResponse()
        with lock:
            pods = list(state["pods"])
        for p in pods:
            pod = out.pod_resources.add(name=p["name"],
                                        namespace=p["namespace"])
            for c in p["containers"]:
                con = pod.containers.add(name=c["name"])
                con.devices.add(resource_name=c["resource"],
                                device_ids=c["ids"])
        return out


def start_kubelet():
    path = os.path.join(DIR, "kubelet.sock")
    if os.path.exists(path):
        os.unlink(path)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pbg.add_RegistrationServicer_to_server(Registration(), server)
    server.add_insecure_port("unix://" + path)
    server.start()
    return server


def allocate(stub, ids):
    request = pb.AllocateRequest()
    request.container_requests.add(devices_ids=ids)
    response = stub.Allocate(request, timeout=10)
    say("Allocate:", len(ids), "units ->",
        json_format.MessageToJson(response, indent=None,
                                  sort_keys=True))
    return json_format.MessageToDict(response)


def command(cmd):
    with lock:
        stub = state["plugin"]
        free = sorted(i for i, h in state["devices"].items()
                      if h == "Healthy" and i not in state["held"])
    op = cmd["op"]
    try:
        if op == "allocate":
            request = pb.PreferredAllocationRequest()
            request.container_requests.add(available_deviceIDs=free,
                                           allocation_size=cmd["size"])
            got = stub.GetPreferredAllocation(request, timeout=10)
            ids = list(got.container_responses[0].deviceIDs)
            say("GetPreferredAllocation:", cmd["size"], "of", len(free),
                "free ->", ",".join(ids))
            # The device manager refuses a pod it cannot give enough.
            if len(ids) < cmd["size"] or len(free) < cmd["size"]:
                return {"error": "not enough units: %d free" % len(free)}
            out = allocate(stub, ids)
            with lock:
                state["held"].update(ids)
            return {"ids": ids, "response": out}
        if op == "preferred":
            request = pb.PreferredAllocationRequest()
            request.container_requests.add(available_deviceIDs=free,
                                           must_include_deviceIDs=cmd["must"],
                                           allocation_size=cmd["size"])
            got = stub.GetPreferredAllocation(request, timeout=10)
            ids = list(got.container_responses[0].deviceIDs)
            say("GetPreferredAllocation:", cmd["size"], "of", len(free),
                "free, must include", ",".join(cmd["must"]), "->",
                ",".join(ids))
            return {"ids": ids}
        if op == "allocate_ids":
            return {"response": allocate(stub, cmd["ids"])}
        if op == "release":
            with lock:
                state["held"].difference_update(cmd["ids"])
            return {}
        if op == "pods":
            with lock:
                state["pods"] = cmd["pods"]
            return {}
    except grpc.RpcError as e:
        say(op, "refused:", e.code().name, e.details())
        return {"code": e.code().name, "details": e.details()}
    return {"error": "unknown op " + op}


def main():
    os.makedirs(os.path.join(DIR, "cmd"), exist_ok=True)
    kubelet = start_kubelet()
    pods = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    prg.add_PodResourcesListerServicer_to_server(PodResources(), pods)
    pods.add_insecure_port("unix://" + os.path.join(DIR, "pod-resources.sock"))
    pods.start()
    say("kubelet: serving Registration on", os.path.join(DIR, "kubelet.sock"))
    done = set()
    while True:
        for name in sorted(os.listdir(os.path.join(DIR, "cmd"))):
            if not name.endswith(".json") or name in done:
                continue
            done.add(name)
            path = os.path.join(DIR, "cmd", name)
            cmd = json.load(open(path))
            if cmd["op"] == "restart":
                say("kubelet: restarting")
                kubelet.stop(0)
                kubelet = start_kubelet()
                result = {}
            elif cmd["op"] == "stop":
                write_json(path[:-5] + ".out", {})
                return
            else:
                result = command(cmd)
            write_json(path[:-5] + ".out", result)
        time.sleep(0.02)


main()
