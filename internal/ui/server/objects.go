package server

import (
	"net/http"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/kinds"
	"github.com/weir-gitops/weir/internal/fleetview"
)

// target reads the object a /api/objects/… path names, as the user.
func (s *Server) target(w http.ResponseWriter, r *http.Request, sess *session) (kinds.Kind, *unstructured.Unstructured, bool) {
	k, ok := kinds.ByKind(r.PathValue("kind"))
	if !ok {
		writeError(w, http.StatusNotFound, "unknown kind "+r.PathValue("kind"))
		return kinds.Kind{}, nil, false
	}
	u := k.New()
	if err := sess.client.Get(r.Context(), client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}, u); err != nil {
		writeAPIError(w, err)
		return kinds.Kind{}, nil, false
	}
	return k, u, true
}

// objectPage is GET /api/objects/{kind}/{namespace}/{name}.
type objectPage struct {
	Summary     fleetview.Summary `json:"summary"`
	Conditions  []condition       `json:"conditions"`
	Spec        any               `json:"spec"`
	Permissions map[string]Perm   `json:"permissions"`
}

type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime"`
}

func (s *Server) object(w http.ResponseWriter, r *http.Request, sess *session) {
	k, u, ok := s.target(w, r, sess)
	if !ok {
		return
	}
	perms, err := s.Permissions(r.Context(), sess, k, u.GetNamespace())
	if err != nil {
		writeAPIError(w, err)
		return
	}
	page := objectPage{Summary: fleetview.Summarize(u), Conditions: []condition{}, Spec: u.Object["spec"], Permissions: perms}
	for _, c := range kinds.Conditions(u) {
		page.Conditions = append(page.Conditions, condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason,
			Message: c.Message, LastTransitionTime: c.LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z07:00")})
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) objectEvents(w http.ResponseWriter, r *http.Request, sess *session) {
	_, u, ok := s.target(w, r, sess)
	if !ok {
		return
	}
	var list corev1.EventList
	if err := sess.client.List(r.Context(), &list, client.InNamespace(u.GetNamespace()),
		client.MatchingFields{"involvedObject.kind": u.GetKind(), "involvedObject.name": u.GetName()}); err != nil {
		writeAPIError(w, err)
		return
	}
	events := make([]Event, 0, len(list.Items))
	for i := range list.Items {
		events = append(events, eventOf(&list.Items[i]))
	}
	slices.SortStableFunc(events, func(a, b Event) int { return strings.Compare(b.LastTime, a.LastTime) })
	writeJSON(w, http.StatusOK, events)
}

func (s *Server) objectDiff(w http.ResponseWriter, r *http.Request, sess *session) {
	if _, _, ok := s.target(w, r, sess); !ok {
		return
	}
	writeError(w, http.StatusNotImplemented, "what would change is not served yet")
}
