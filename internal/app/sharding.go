package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/internal/runtime/shard"
)

// joinShards prepares this replica's membership with --shard-mode=auto,
// and fences cfg with it: every write the controllers make through the
// manager's configuration (their clients, server-side apply, events)
// waits for the membership Lease being held. The membership's own Lease
// writes go through a copy made before. Leader election is turned off:
// every replica is active, and auto takes precedence over
// --enable-leader-election, which Flux's manifests set.
func joinShards(cfg *rest.Config, opts *Options, log logr.Logger) (*shard.Member, error) {
	if !opts.autoSharding() {
		return nil, nil
	}
	ns := os.Getenv("RUNTIME_NAMESPACE")
	if ns == "" {
		return nil, fmt.Errorf("--shard-mode=auto needs the RUNTIME_NAMESPACE environment variable: the membership Leases live there")
	}
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("creating the sharding client: %w", err)
	}
	group := opts.ShardGroup
	if group == "" {
		group = leaderElectionID(*opts)
	}
	if opts.EnableLeaderElection {
		log.Info("--shard-mode=auto: leader election is off, every replica reconciles its share")
		opts.EnableLeaderElection = false
	}
	identity := shardIdentity()
	m, err := shard.NewMember(shard.Config{
		Client: cs, Namespace: ns, Group: group, Identity: identity,
		LeaseDuration: opts.LeaseDuration, RenewDeadline: opts.RenewDeadline,
		Log: log.WithName("sharding"),
	})
	if err != nil {
		return nil, err
	}
	if strings.Contains(opts.StorageAdvAddr, ".svc") {
		log.Info("--shard-mode=auto: --storage-adv-addr names a Service; each replica serves only its own artifacts, "+
			"so it should advertise its own address (--storage-adv-addr=$(POD_IP):9090)", "storageAdvAddr", opts.StorageAdvAddr)
	}
	cfg.Wrap(m.Fence)
	// The member's identity in every request's User-Agent, so the API
	// server's audit log says which replica wrote what (replicas of one
	// Deployment share a ServiceAccount). After a "/": the API server
	// names a write's default field manager by what comes before it,
	// which stays "weir-controller".
	cfg.UserAgent += "/" + ShardUserAgentPrefix + identity
	return m, nil
}

// ShardUserAgentPrefix precedes a replica's member identity in the
// User-Agent of its requests with --shard-mode=auto.
const ShardUserAgentPrefix = "shard-member="

// shardIdentity is the Pod's name (or the host's) and a random suffix, so
// a restarted process is a new member and never takes for its own a Lease
// its predecessor may still be thought to hold.
func shardIdentity() string {
	host := os.Getenv("POD_NAME")
	if host == "" {
		host, _ = os.Hostname()
	}
	return host + "_" + string(uuid.NewUUID())[:8]
}
