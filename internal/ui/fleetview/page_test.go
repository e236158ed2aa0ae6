package fleetview

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestDecodeListLeavesOutWhatIsNotShown decodes the fleet as the API
// server lists it: no inventory, managedFields for the suspended objects
// only, and every Summary the same as from the whole objects.
func TestDecodeListLeavesOutWhatIsNotShown(t *testing.T) {
	full := syntheticFleet(60)
	items := make([]any, len(full))
	for i := range full {
		items[i] = full[i].Object
	}
	raw, err := json.Marshal(map[string]any{"kind": "KustomizationList", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeList(raw)
	if err != nil {
		t.Fatal(err)
	}
	var whole unstructured.UnstructuredList
	if err := runtime.DecodeInto(unstructured.UnstructuredJSONScheme, raw, &whole); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		u := &got[i]
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "inventory"); found {
			t.Errorf("%s: status.inventory decoded", u.GetName())
		}
		_, suspended := full[i].Object["spec"].(map[string]any)["suspend"]
		if has := len(u.GetManagedFields()) > 0; has != suspended {
			t.Errorf("%s: managedFields decoded %v, suspended %v", u.GetName(), has, suspended)
		}
		if g, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); g != 1 {
			t.Errorf("%s: observedGeneration %v, want the int64 1", u.GetName(), u.Object["status"].(map[string]any)["observedGeneration"])
		}
	}
	if diff := cmp.Diff(Summaries(whole.Items), Summaries(got)); diff != "" {
		t.Errorf("summaries from the partial decoding differ (-whole +partial):\n%s", diff)
	}
	if _, err := decodeList([]byte(`{"items": [{"metadata": 5}]}`)); err == nil || !strings.Contains(err.Error(), "decoding the list") {
		t.Errorf("a malformed item: error %v, want one saying the list could not be decoded", err)
	}
}

func TestPageApply(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	sum := func(name, state, reason, lastRun string, interval int64) Summary {
		return Summary{Kind: "Kustomization", Namespace: "apps", Name: name, State: state, Reason: reason,
			LastRun: lastRun, Interval: interval, Suspended: state == StateSuspended}
	}
	all := []Summary{
		sum("ks-10", StateReady, "Succeeded", "2026-12-01T11:50:00Z", 3600),   // next 12:50
		sum("ks-9", StateFailing, "BuildFailed", "2026-12-01T11:59:00Z", 120), // next 12:01
		sum("KS-2", StateReady, "Succeeded", "", 0),                           // no schedule
		sum("ks-1", StateSuspended, "Succeeded", "2026-12-01T10:00:00Z", 60),
	}
	names := func(o Overview) string {
		var out []string
		for _, s := range o.Objects {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	for _, tt := range []struct {
		name  string
		page  Page
		want  string
		total int
	}{
		{"the default order: attention first, then by name as bytes", Page{}, "ks-9,KS-2,ks-1,ks-10", 4},
		{"by name, digits as numbers, case aside", Page{Sort: "name"}, "ks-1,KS-2,ks-9,ks-10", 4},
		{"by name, descending", Page{Sort: "name", Desc: true}, "ks-10,ks-9,KS-2,ks-1", 4},
		{"by name, the second page", Page{Sort: "name", Offset: 2, Limit: 2}, "ks-9,ks-10", 4},
		{"past the end", Page{Sort: "name", Offset: 9, Limit: 2}, "", 4},
		{"by next run: times, suspended, none", Page{Sort: "next"}, "ks-9,ks-10,ks-1,KS-2", 4},
		{"by reason, then by name", Page{Sort: "reason"}, "ks-9,ks-1,KS-2,ks-10", 4},
		{"by state", Page{Sort: "state", Limit: 3}, "ks-9,KS-2,ks-10", 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.page.Now = now
			o := NewOverview(slices.Clone(all), Filter{})
			tt.page.Apply(&o)
			if got := names(o); got != tt.want || o.Total != tt.total {
				t.Errorf("page %q of %d, want %q of %d", got, o.Total, tt.want, tt.total)
			}
			if len(o.Attention) != 1 || len(o.Suspended) != 1 || o.Counts[0].Total != 4 {
				t.Errorf("the page cut the fleet's lists: attention %d, suspended %d, counts %+v", len(o.Attention), len(o.Suspended), o.Counts)
			}
		})
	}
}

func TestNaturalCompare(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"ks-2", "ks-10", -1}, {"ks-010", "ks-9", 1}, {"Apps", "apps", -1}, {"apps", "Apps", 1},
		{"a", "ab", -1}, {"same", "same", 0}, {"B", "a", 1}, {"v1.10", "v1.9", 1},
	} {
		if got := naturalCompare(tt.a, tt.b); got != tt.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
