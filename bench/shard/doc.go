// Package shard measures automatic sharding (--shard-mode=auto, design
// 0037; issue 31): N Kustomizations of one ConfigMap each on one
// GitRepository converge under R replicas, each a weir-controller process
// of its own (built from cmd/weir-controller, its own storage address, as
// a pod of one Deployment would run), against the kwok control plane. It
// reports the time to converge and its ratio to a floor (the same
// ConfigMaps server-side applied directly, measured in the same run) and
// to the first replica count's run; each replica's CPU seconds, peak RSS
// and API requests (its own controller-runtime metrics); the API server's,
// etcd's and the other control-plane processes' CPU seconds over the same
// time, which say where scaling stops; and the time for the fleet to be
// whole again after one replica is killed with SIGKILL: every
// Kustomization has handled a reconcile request made at the kill. With one
// replica a replacement is started at once, as the Deployment's
// ReplicaSet would; with more the survivors take the share once the
// killed replica's Lease expired (Flux's 35 s lease duration, the
// default). Run it with
//
//	go test ./bench/shard -run '^$' -bench . -benchtime 1x -v -timeout 90m
//
// WEIR_BENCH_KUSTOMIZATIONS (comma-separated) overrides N = 1000 and
// WEIR_BENCH_REPLICAS the replica counts 1,2 (the first is the baseline
// of the ratios). A plain `go test ./...` starts nothing here.
package shard
