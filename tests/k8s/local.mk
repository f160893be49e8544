# Kubernetes: the device plugin against a kubelet stand-in (kubelet.py,
# gRPC with Debian's python3-grpcio) and the deployment files parsed by
# the Kubernetes client's models, under make check; the containers its
# answers make, for real in Podman, under make check-system.
K8S_TESTS = tests/k8s/t-plugin.sh tests/k8s/t-deploy.sh
TESTS += $(K8S_TESTS)
K8S_SYSTEM_TESTS = tests/k8s/t-podman-k8s.sh
SYSTEM_TESTS += $(K8S_SYSTEM_TESTS)
EXTRA_DIST += $(K8S_TESTS) $(K8S_SYSTEM_TESTS) tests/k8s/defs.sh \
	tests/k8s/kubelet.py deploy/kubernetes/daemonset.yaml \
	deploy/kubernetes/pod.yaml deploy/kubernetes/Containerfile
