package gitcomment

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// FuzzCommentBody feeds events as a controller could send them: the body
// always starts with the object's marker, so the next event finds the
// comment, and the change request parses to a positive number or an error.
func FuzzCommentBody(f *testing.F) {
	f.Add("Kustomization", "apps", "podinfo", "Applied revision", "env", "prod", "7")
	f.Add("HelmRelease", "a b", "-->", "<!-- x -->\n", "event.toolkit.fluxcd.io/change_request", "3", " 12 ")
	f.Add("", "", "", "", "", "", "-1")
	f.Fuzz(func(t *testing.T, kind, ns, name, message, key, value, cr string) {
		e := events.Event{
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name},
			Severity:       events.SeverityInfo, Message: message,
			Metadata: map[string]string{key: value, "event.toolkit.fluxcd.io/change_request": cr},
		}
		b := body(prMarker, providerUID, e)
		if m := marker(prMarker, providerUID, e); !strings.HasPrefix(b, m+"\n") {
			t.Fatalf("body does not start with its marker %q:\n%s", m, b)
		}
		n, err := requestNumber(e)
		if (err == nil) != (n > 0) {
			t.Fatalf("requestNumber(%q) = %d, %v", cr, n, err)
		}
	})
}
