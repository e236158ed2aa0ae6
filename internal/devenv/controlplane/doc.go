// Package controlplane runs a real, local Kubernetes control plane made of
// child processes: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok (a kubelet stand-in that makes pods on its fake
// node run and become Ready without containers). The binaries are built from
// Go modules by tools/controlplane/build.sh into bin/controlplane.
//
// kwok's server also plays the node's kubelet for logs: every container
// of every Pod on the node logs one file (PodLogFile, appended to with
// AppendPodLog), which pods/log reads and follows through the API server,
// as `kubectl logs -f` would on a real node.
//
// Tests use it through internal/devenv/testenv; `weir dev` uses it directly. Every
// process is started with a parent-death signal and stopped by PID, so
// nothing outlives the program that started it.
//
//	cp, err := controlplane.Start(ctx, controlplane.Options{BinDir: dir})
//	defer cp.Stop()
//	cfg := cp.RESTConfig() // admin credentials
package controlplane
