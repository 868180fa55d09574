module github.com/csi-node-proxy/csi-node-proxy/v2compat

go 1.26.0

require github.com/csi-node-proxy/csi-node-proxy v0.0.0-00010101000000-000000000000

require (
	github.com/geoffgarside/ber v1.1.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-ole/go-ole v1.3.0 // indirect
	github.com/godbus/dbus/v5 v5.2.4 // indirect
	github.com/hirochachacha/go-smb2 v1.1.0 // indirect
	github.com/moby/sys/mountinfo v0.6.2 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

replace github.com/csi-node-proxy/csi-node-proxy => ../
