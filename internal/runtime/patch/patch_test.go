package patch

import "testing"

func TestChanges(t *testing.T) {
	tests := []struct {
		patch          string
		status, object bool
	}{
		{`{}`, false, false},
		{`{"status":{"conditions":[{"type":"Ready"}]}}`, true, false},
		{`{"metadata":{"finalizers":["finalizers.fluxcd.io"]}}`, false, true},
		{`{"metadata":{"resourceVersion":"12"}}`, false, false},
		{`{"metadata":{"resourceVersion":"12","managedFields":null},"status":{"x":1}}`, true, false},
		{`{"metadata":{"labels":{"a":"b"}},"status":{"x":1}}`, true, true},
		{`{"spec":{"suspend":true}}`, false, true},
	}
	for _, tt := range tests {
		status, object, err := changes([]byte(tt.patch))
		if err != nil || status != tt.status || object != tt.object {
			t.Errorf("changes(%s) = %v, %v, %v; want %v, %v", tt.patch, status, object, err, tt.status, tt.object)
		}
	}
	if _, _, err := changes([]byte(`[`)); err == nil {
		t.Error("a patch that does not parse is no error")
	}
}
