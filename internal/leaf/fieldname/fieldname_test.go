package fieldname

import "testing"

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"Path": "path", "TargetPath": "target_path", "VolumeID": "volume_id", "IQN": "iqn",
		"MutualChapSecret": "mutual_chap_secret", "ChapSecret": "chap_secret", "IDPath": "id_path",
		"Page83": "page83", "LUNID": "lunid", "SizeBytes": "size_bytes", "RemotePath": "remote_path",
		"DiskNumber": "disk_number", "": "",
	} {
		if got := Snake(in); got != want {
			t.Errorf("Snake(%q) = %q, want %q", in, got, want)
		}
	}
}
