package manifests

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/weir-gitops/weir/api/meta"
)

// Sharding, as Flux's sharding guide sets it up and the Flux Operator's
// spec.sharding generates it: the main source, kustomize and helm
// controllers reconcile only the objects without a shard key
// (mainSelector); each shard runs its own copy of them, named
// <controller>-<shard>, reconciling only the objects labelled with its
// name, under the main controllers' ServiceAccounts. A shard's source
// controller serves its artifacts behind a Service of its own name.
const (
	// ShardRoleAnnotation marks the Deployments and Services of a shard,
	// as the Flux Operator marks them (value ShardRole); Flux's guide
	// selects the main Deployments by its absence.
	ShardRoleAnnotation = "sharding.fluxcd.io/role"
	ShardRole           = "shard"
	// mainSelector is the main controllers' --watch-label-selector.
	mainSelector = "!" + meta.ShardKeyLabel
)

// shardedComponents are the components each shard runs a copy of, as the
// Flux Operator shards them.
var shardedComponents = []string{SourceController, KustomizeController, HelmController}

// shardSelector is a shard's --watch-label-selector.
func shardSelector(shard string) string {
	return fmt.Sprintf("%s in (%s)", meta.ShardKeyLabel, shard)
}

// validateShards rejects shard names that cannot name a Service
// (source-controller-<shard>) or be a label value, and duplicates.
func validateShards(shards []string) error {
	for i, s := range shards {
		if errs := validation.IsDNS1123Label(s); len(errs) > 0 {
			return fmt.Errorf("invalid shard name %q: %s", s, errs[0])
		}
		if errs := validation.IsDNS1035Label(SourceController + "-" + s); len(errs) > 0 {
			return fmt.Errorf("invalid shard name %q: Service %s-%s: %s", s, SourceController, s, errs[0])
		}
		if slices.Contains(shards[:i], s) {
			return fmt.Errorf("shard %q is given twice", s)
		}
	}
	return nil
}

// sharded reports whether d runs a component the shards split: its
// reconciles are restricted by a label selector once there are shards.
func sharded(d deploymentSpec) bool {
	for _, c := range d.components {
		if slices.Contains(shardedComponents, c) {
			return true
		}
	}
	return false
}

// shardDeployments are the shards' Deployments, shard by shard: one per
// sharded component in the split layout, one weir-controller-<shard>
// running them all in the single layout.
func (g generator) shardDeployments() []deploymentSpec {
	var out []deploymentSpec
	for _, shard := range g.opts.Shards {
		for _, d := range g.deployments() {
			var run []string
			for _, c := range d.components {
				if slices.Contains(shardedComponents, c) {
					run = append(run, c)
				}
			}
			if len(run) == 0 {
				continue
			}
			out = append(out, deploymentSpec{name: d.name + "-" + shard, base: d.name, shard: shard, components: run})
		}
	}
	return out
}

// shardServices are the shards' source-controller-<shard> Services, which
// their artifact URLs name.
func (g generator) shardServices() []runtime.Object {
	if !g.has(SourceController) {
		return nil
	}
	out := make([]runtime.Object, 0, len(g.opts.Shards))
	for _, shard := range g.opts.Shards {
		svc := g.service(SourceController+"-"+shard, SourceController, "http").(*corev1.Service)
		svc.Annotations = map[string]string{ShardRoleAnnotation: ShardRole}
		svc.Spec.Selector = map[string]string{"app": g.runs(SourceController) + "-" + shard}
		out = append(out, svc)
	}
	return out
}

// selectorArg is d's --watch-label-selector, or "" where d is not
// restricted: no shards, or components the shards do not split.
func (g generator) selectorArg(d deploymentSpec) string {
	switch {
	case d.shard != "":
		return "--watch-label-selector=" + shardSelector(d.shard)
	case len(g.opts.Shards) > 0 && sharded(d):
		return "--watch-label-selector=" + mainSelector
	}
	return ""
}

// Automatic sharding (--shard-mode=auto, design 0037): every replica of a
// sharded Deployment is active and serves the artifacts of the sources it
// owns itself, so each must advertise its own address rather than the
// Service, which balances over the replicas: --storage-adv-addr is the
// pod's IP (POD_IP, from the downward API) and the artifact port.
const (
	ShardModeOff  = "off"
	ShardModeAuto = "auto"
)

// validateShardMode rejects an unknown mode, and replicas other than one
// without auto mode: with leader election the extra replicas would stand
// by, and their artifact stores would sit behind one Service.
func validateShardMode(mode string, replicas int) error {
	switch mode {
	case ShardModeOff, ShardModeAuto:
	default:
		return fmt.Errorf("unknown shard mode %q: want off or auto", mode)
	}
	if replicas < 1 {
		return fmt.Errorf("--replicas=%d: want at least 1", replicas)
	}
	if replicas > 1 && mode != ShardModeAuto {
		return fmt.Errorf("--replicas=%d needs --shard-mode=auto", replicas)
	}
	return nil
}

// autoSharded reports whether d runs in auto mode: it runs a component
// the shards split, and --shard-mode=auto was given.
func (g generator) autoSharded(d deploymentSpec) bool {
	return g.opts.ShardMode == ShardModeAuto && sharded(d)
}

// replicas is d's replica count.
func (g generator) replicas(d deploymentSpec) int32 {
	if g.autoSharded(d) {
		return int32(g.opts.Replicas) //nolint:gosec // validated: at least 1, and a flag's int
	}
	return 1
}

// podIPEnv is the downward-API variable an auto-sharded pod advertises.
var podIPEnv = corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
	FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}

// storageAdvAddr is d's --storage-adv-addr: its pod's IP in auto mode,
// else the Service its artifact URLs name.
func (g generator) storageAdvAddr(d deploymentSpec) string {
	if g.autoSharded(d) {
		return fmt.Sprintf("--storage-adv-addr=$(POD_IP):%d", httpPort)
	}
	return fmt.Sprintf("--storage-adv-addr=%s.$(RUNTIME_NAMESPACE).svc.%s.", advertises(d), g.opts.ClusterDomain)
}
