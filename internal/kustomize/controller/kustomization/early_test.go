package kustomization

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// TestLargeBuildBadObjectAppliesNothing: a build of more files than one
// kustomize run takes has its first objects dry-run while the rest is
// built (earlyApply); an object refused in the middle still leaves the
// whole stage unwritten, with the message of a dry-run failure, and the
// fixed revision applies every object.
func TestLargeBuildBadObjectAppliesNothing(t *testing.T) {
	const count, bad = 250, 170
	files := func(badValue string) map[string]string {
		out := map[string]string{}
		for i := range count {
			v := `"1"`
			if i == bad {
				v = badValue
			}
			out[fmt.Sprintf("big/cm-%04d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\ndata:\n  a: %s\n", i, v)
		}
		return out
	}
	f, sha := newFixture(t, files("1")) // a number, not a string: refused by the API server
	k := f.kustomization("big", "./big", nil)
	f.env.Create(t, k)
	ready := f.waitFailed(k, "main@sha1:"+sha, meta.ReconciliationFailedReason)
	if want := fmt.Sprintf("ConfigMap/%s/cm-%04d dry-run failed", f.ns, bad); !strings.Contains(ready.Message, want) {
		t.Errorf("Ready message %q, want it to contain %q", ready.Message, want)
	}
	key := client.ObjectKeyFromObject(k)
	if n := f.env.OwnedConfigMaps(t, f.ns, key); n != 0 {
		t.Errorf("%d ConfigMaps written, want none", n)
	}

	sha = f.push(gitserver.Commit{Files: files(`"fixed"`), Message: "fix"})
	f.env.RequestReconcile(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	if n := f.env.OwnedConfigMaps(t, f.ns, key); n != count {
		t.Errorf("%d ConfigMaps applied, want %d", n, count)
	}
	if v := f.configMap(fmt.Sprintf("cm-%04d", bad)).Data["a"]; v != "fixed" {
		t.Errorf("cm-%04d data.a = %q, want fixed", bad, v)
	}
}
