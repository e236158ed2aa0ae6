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
