// Package testenv gives integration tests a real Kubernetes API server with
// weir's CRDs installed: one control plane per test package (started in
// TestMain), a fresh namespace per test, and helpers that read objects the
// way kstatus and the flux CLI do. Its subpackages serve Git, OCI and Helm
// repositories on 127.0.0.1.
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		env := testenv.Get(t)
//		ns := env.Namespace(t)
//		...
//	}
package testenv
