package browsertest

import (
	"testing"
	"time"

	"github.com/weir-gitops/weir/api/meta"
)

// TestShardShowsOnTheListAndThePage labels a Kustomization for a shard,
// as Flux's sharding guide has users do, and finds the shard beside its
// name in the overview and on its page; an unlabelled one shows none.
func TestShardShowsOnTheListAndThePage(t *testing.T) {
	f := newFleet(t)
	k := f.ks["apps"]
	f.env.Update(t, k, func() {
		labels := k.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[meta.ShardKeyLabel] = "shard1"
		k.SetLabels(labels)
	})
	b := newUI(t, f.env.Config)
	b.open("/?namespace=" + f.ns)
	row := func(name string) string {
		return `document.querySelector('[data-testid=object-row][data-id="Kustomization/` + f.ns + `/` + name + `"]')`
	}
	b.waitJS("the shard in the apps row", row("apps")+`?.querySelector('[data-testid=shard]')?.textContent === 'shard1'`, 10*time.Second)
	if got := b.str(row("infrastructure") + `?.querySelector('[data-testid=shard]')?.textContent || ''`); got != "" {
		t.Errorf("infrastructure (no label) shows shard %q", got)
	}
	b.open(ksURL(f.ns, "apps"))
	if got := b.str(`document.querySelector('[data-testid=object-shard]')?.textContent || ''`); got != "shard1" {
		t.Errorf("the apps page shows shard %q, want shard1", got)
	}
	b.open(ksURL(f.ns, "infrastructure"))
	if got := b.str(`document.querySelector('[data-testid=object-shard]')?.textContent || ''`); got != "" {
		t.Errorf("the infrastructure page shows shard %q, want none", got)
	}
}
