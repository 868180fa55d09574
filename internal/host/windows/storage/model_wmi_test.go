package storage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// ---- WMI: the Storage Management API ----

// modelInstance is one WMI object: its properties, decoded the way
// wmi.Client decodes them (uint16/uint32 as int64, uint64 as decimal
// strings, NULL as nil), and the model object behind it.
type modelInstance struct {
	props wmi.Props
	disk  *modelDisk
	part  *modelPartition
	vol   *modelVolume
}

// MSFT_Disk.PartitionStyle and MSFT_Volume.FileSystemType values (fact
// sheet §1.6, §2.3).
var (
	msftPartitionStyle = map[uint32]int64{partitionStyleRAW: 0, partitionStyleMBR: 1, partitionStyleGPT: msftPartitionStyleGPT}
	msftFileSystemType = map[string]int64{"": 0, "FAT32": 6, "NTFS": 14, "ReFS": 15}
)

func u64(n int64) string { return strconv.FormatInt(n, 10) }

// instances lists the instances of a class the storage provider reports.
// Partitions of offline disks are listed (their table is readable); the
// volumes of offline disks are not (their devices are gone).
func (m *winModel) instances(class string) ([]modelInstance, error) {
	if !slices.ContainsFunc([]string{classDisk, classPartition, classVolume}, func(c string) bool { return strings.EqualFold(c, class) }) {
		return nil, &wmi.COMError{Op: "ExecQuery", HRESULT: 0x80041010} // WBEM_E_INVALID_CLASS
	}
	var out []modelInstance
	for _, d := range m.sortedDisks() {
		switch {
		case strings.EqualFold(class, classDisk):
			loc := any(nil)
			if a := d.scsi; d.busType == modelBusNVMe {
				loc = fmt.Sprintf("Integrated : Bus %d : Device 0 : Function 0 : Adapter 0", d.pciBus)
			} else if a != nil {
				loc = fmt.Sprintf("Integrated : Adapter %d : Port %d : Target %d : LUN %d", a.PortNumber, a.PathID, a.TargetID, a.Lun)
			}
			out = append(out, modelInstance{disk: d, props: wmi.Props{
				"Number": int64(d.number), "Path": d.iface, "Location": loc, "Size": u64(d.size),
				"IsOffline": d.offline, "IsReadOnly": d.readOnly, "PartitionStyle": msftPartitionStyle[d.style], "SerialNumber": d.serial,
				"BusType": int64(d.busType), "IsSystem": d.system, "IsBoot": d.system, "NumberOfPartitions": int64(len(d.parts)),
			}})
		case strings.EqualFold(class, classPartition):
			for _, p := range d.parts {
				props := wmi.Props{
					"DiskNumber": int64(d.number), "PartitionNumber": int64(p.number), "Offset": u64(p.offset), "Size": u64(p.size),
					"GptType": nil, "MbrType": nil, "DriveLetter": nil, "IsOffline": false,
				}
				if d.style == partitionStyleGPT {
					props["GptType"] = "{" + p.gptType + "}"
				} else {
					props["MbrType"] = int64(p.mbrType)
				}
				if l := m.letterOf(p.vol); l != 0 {
					props["DriveLetter"] = int64(l)
				}
				out = append(out, modelInstance{disk: d, part: p, props: props})
			}
		default: // MSFT_Volume
			for _, p := range d.parts {
				v := p.vol
				if v == nil || !v.present() {
					continue
				}
				props := wmi.Props{
					"UniqueId": v.guid, "Path": v.guid, "FileSystem": v.fs, "FileSystemType": msftFileSystemType[v.fs],
					"Size": u64(p.size), "SizeRemaining": "0", "DriveLetter": nil,
				}
				if v.root != nil {
					props["SizeRemaining"] = u64(p.size - v.used())
				}
				if l := m.letterOf(v); l != 0 {
					props["DriveLetter"] = int64(l)
				}
				out = append(out, modelInstance{disk: d, part: p, vol: v, props: props})
			}
		}
	}
	return out, nil
}

// letterOf returns v's drive letter, or 0.
func (m *winModel) letterOf(v *modelVolume) byte {
	for l, lv := range m.letters {
		if v != nil && lv == v {
			return l
		}
	}
	return 0
}

// modelCond is one WHERE condition of a query.
type modelCond struct {
	prop string
	op   string // "=" or "<>"
	lit  any    // string, bool or int64
}

// modelConditions parses the WHERE clause of a query wmi.WQL built:
// conditions "Prop op literal" joined by AND, string literals quoted with
// backslash escapes (wmi.Literal).
func modelConditions(text string) ([]modelCond, error) {
	i := strings.Index(text, " WHERE ")
	if i < 0 {
		return nil, nil
	}
	s := text[i+len(" WHERE "):]
	var out []modelCond
	for {
		f := strings.SplitN(s, " ", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("model: cannot parse the condition %q", s)
		}
		c := modelCond{prop: f[0], op: f[1]}
		s = f[2]
		if strings.HasPrefix(s, "'") {
			var b strings.Builder
			j := 1
			for ; j < len(s) && s[j] != '\''; j++ {
				if s[j] == '\\' {
					j++
				}
				b.WriteByte(s[j])
			}
			c.lit, s = b.String(), s[j+1:]
		} else {
			tok := s
			if k := strings.Index(s, " AND "); k >= 0 {
				tok = s[:k]
			}
			s = s[len(tok):]
			switch tok {
			case "TRUE", "FALSE":
				c.lit = tok == "TRUE"
			default:
				n, err := strconv.ParseInt(tok, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("model: literal %q: %w", tok, err)
				}
				c.lit = n
			}
		}
		out = append(out, c)
		if s == "" {
			return out, nil
		}
		if !strings.HasPrefix(s, " AND ") {
			return nil, fmt.Errorf("model: cannot parse %q after a condition", s)
		}
		s = s[len(" AND "):]
	}
}

// propOf reads a property without case, as CIM names compare.
func propOf(p wmi.Props, name string) (any, bool) {
	for k, v := range p {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// matches applies the conditions. A NULL property matches neither = nor
// <> (SQL semantics; what WQL does with <> on NULL is unconfirmed, fact
// sheet §C.18). Strings compare without case; numbers held as strings
// (uint64) compare as numbers.
func matches(p wmi.Props, conds []modelCond) (bool, error) {
	for _, c := range conds {
		v, ok := propOf(p, c.prop)
		if !ok {
			return false, &wmi.COMError{Op: "ExecQuery", HRESULT: 0x80041017, Description: "no property " + c.prop} // WBEM_E_INVALID_QUERY
		}
		if v == nil {
			return false, nil
		}
		var eq bool
		switch x := v.(type) {
		case string:
			switch l := c.lit.(type) {
			case string:
				eq = strings.EqualFold(x, l)
			case int64:
				eq = x == strconv.FormatInt(l, 10)
			}
		case int64:
			switch l := c.lit.(type) {
			case int64:
				eq = x == l
			case bool:
				eq = (x != 0) == l
			}
		case bool:
			switch l := c.lit.(type) {
			case bool:
				eq = x == l
			case int64:
				eq = x == (l != 0)
			}
		}
		if eq != (c.op == "=") {
			return false, nil
		}
	}
	return true, nil
}

// selectInstances runs q against the provider's instances.
func (m *winModel) selectInstances(q *wmi.WQL) ([]modelInstance, string, error) {
	text, err := q.Build()
	if err != nil {
		return nil, "", err
	}
	conds, err := modelConditions(text)
	if err != nil {
		m.t.Error(err)
		return nil, text, err
	}
	all, err := m.instances(q.Class())
	if err != nil {
		return nil, text, err
	}
	var out []modelInstance
	for _, in := range all {
		ok, err := matches(in.props, conds)
		if err != nil {
			return nil, text, err
		}
		if ok {
			out = append(out, in)
		}
	}
	return out, text, nil
}

func (m *winModel) query(ctx context.Context, q *wmi.WQL) ([]wmi.Props, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	found, _, err := m.selectInstances(q)
	if err != nil {
		return nil, err
	}
	rows := []wmi.Props{}
	for _, in := range found {
		row := in.props
		if names := q.Properties(); len(names) > 0 {
			row = wmi.Props{}
			for _, n := range names {
				v, ok := propOf(in.props, n)
				if !ok {
					return nil, &wmi.COMError{Op: "ExecQuery", HRESULT: 0x80041017, Description: "no property " + n}
				}
				row[n] = v
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// modelArgs are a method's in-parameters by lower-cased name, as the
// caller gave them to wmi.Arg.
type modelArgs map[string]any

func (a modelArgs) has(name string) bool {
	v, ok := a[strings.ToLower(name)]
	return ok && v != nil
}

func (a modelArgs) str(name string) string {
	s, _ := a[strings.ToLower(name)].(string)
	return s
}

func (a modelArgs) flag(name string) bool {
	b, _ := a[strings.ToLower(name)].(bool)
	return b
}

// number reads an integer parameter of any Go integer type, or a decimal
// string (how 64-bit values travel through scripting).
func (a modelArgs) number(name string) (uint64, bool) {
	switch x := a[strings.ToLower(name)].(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	case string:
		n, err := strconv.ParseUint(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func (m *winModel) call(ctx context.Context, q *wmi.WQL, method string, in ...wmi.Param) (wmi.Props, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args := modelArgs{}
	for _, p := range in {
		if _, _, err := wmi.Encode(p.Value()); err != nil {
			m.t.Errorf("model: %s.%s parameter %s cannot be sent over COM: %v", q.Class(), method, p.Name(), err)
		}
		args[strings.ToLower(p.Name())] = p.Value()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	found, text, err := m.selectInstances(q)
	switch {
	case err != nil:
		return nil, err
	case len(found) == 0:
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "no %s instance matches %s", q.Class(), text)
	case len(found) > 1:
		return nil, fmt.Errorf("%d %s instances match %s; refusing to call %s on more than one", len(found), q.Class(), text, method)
	}
	out, code := m.invoke(found[0], q.Class(), method, args)
	if out == nil {
		out = wmi.Props{}
	}
	out["ReturnValue"] = int64(code)
	if code != wmi.Success {
		return out, &wmi.MethodError{Class: q.Class(), Method: method, Code: code}
	}
	return out, nil
}

// invoke runs a Storage Management method on one instance and returns
// its out-parameters and ReturnValue.
func (m *winModel) invoke(in modelInstance, class, method string, args modelArgs) (wmi.Props, wmi.ReturnCode) {
	key := strings.ToLower(class + "." + method)
	switch key {
	case "msft_disk.initialize":
		return nil, m.initialize(in.disk, args)
	case "msft_disk.createpartition":
		return m.createPartition(in.disk, args)
	case "msft_disk.online", "msft_disk.offline":
		if in.disk.system && key == "msft_disk.offline" {
			return nil, modelCriticalDisk
		}
		in.disk.offline = key == "msft_disk.offline"
		return nil, wmi.Success
	case "msft_disk.setattributes":
		// MSFT_Disk.SetAttributes(IsReadOnly, Signature, Guid): the model
		// keeps the one attribute the backend sets; it works on online and
		// offline disks alike (Learn "SetAttributes method of the
		// MSFT_Disk class").
		if args.has("IsReadOnly") {
			in.disk.readOnly = args.flag("IsReadOnly")
		}
		return nil, wmi.Success
	case "msft_disk.refresh":
		return nil, wmi.Success
	case "msft_partition.online":
		// Partitions the model creates are online at once (SAN policy
		// OnlineAll); the call only needs the disk online.
		if in.disk.offline {
			return nil, wmi.DiskOffline
		}
		return nil, wmi.Success
	case "msft_partition.getsupportedsize":
		lo, hi, code := m.supportedSize(in.disk, in.part)
		if code != wmi.Success {
			return nil, code
		}
		return wmi.Props{"SizeMin": u64(lo), "SizeMax": u64(hi)}, wmi.Success
	case "msft_partition.resize":
		return nil, m.resize(in.disk, in.part, args)
	case "msft_volume.format":
		return m.format(in.vol, args)
	case "msft_volume.flush":
		in.vol.flushes++
		return nil, wmi.Success
	}
	m.t.Errorf("model: %s.%s is not modelled", class, method)
	return nil, wmi.NotSupported
}

// initialize is MSFT_Disk.Initialize: PartitionStyle 1 (MBR) or 2 (GPT,
// the default). Whether GPT initialisation adds a Microsoft Reserved
// partition is unconfirmed (fact sheet §C.5); the model adds none, as the
// simulated host.
func (m *winModel) initialize(d *modelDisk, args modelArgs) wmi.ReturnCode {
	style := uint64(msftPartitionStyleGPT)
	if args.has("PartitionStyle") {
		style, _ = args.number("PartitionStyle")
	}
	switch {
	case d.offline:
		return wmi.DiskOffline
	case d.style != partitionStyleRAW:
		return wmi.DiskAlreadyInitialized
	case style == 1:
		d.style = partitionStyleMBR
	case style == msftPartitionStyleGPT:
		d.style = partitionStyleGPT
	default:
		return wmi.InvalidParameter
	}
	return wmi.Success
}

// createPartition is MSFT_Disk.CreatePartition: a partition after the
// last one, 1 MiB aligned, of Size bytes or (UseMaximumSize) up to the
// last usable 1 MiB boundary, with a new RAW volume unless it is a
// Microsoft Reserved partition.
func (m *winModel) createPartition(d *modelDisk, args modelArgs) (wmi.Props, wmi.ReturnCode) {
	switch {
	case d.offline:
		return nil, wmi.DiskOffline
	case d.style == partitionStyleRAW:
		return nil, wmi.DiskNotInitialized
	case args.flag("UseMaximumSize") == args.has("Size"):
		return nil, modelSizeOrMaximum
	case args.has("DriveLetter") && args.flag("AssignDriveLetter"):
		return nil, wmi.InvalidParameter
	}
	p := &modelPartition{number: 1}
	switch d.style {
	case partitionStyleGPT:
		if args.has("MbrType") {
			return nil, wmi.ParameterNotValidForPartitionType
		}
		p.gptType = gptBasicData
		if t := strings.ToLower(strings.Trim(args.str("GptType"), "{}")); t != "" {
			p.gptType = t
		}
	case partitionStyleMBR:
		if args.has("GptType") {
			return nil, wmi.ParameterNotValidForPartitionType
		}
		if len(d.parts) >= 4 {
			return nil, modelPartitionLimit
		}
		p.mbrType = modelMBRHuge
		if t, ok := args.number("MbrType"); ok {
			p.mbrType = uint8(t)
		}
	}
	start := modelMiB
	for _, q := range d.parts {
		start = max(start, (q.offset+q.size+modelMiB-1)/modelMiB*modelMiB)
		p.number = max(p.number, q.number+1)
	}
	end := d.lastUsable()
	if size, ok := args.number("Size"); ok {
		if start+int64(size) > end {
			return nil, modelNotEnoughCapacity
		}
		end = start + int64(size)
	}
	if end-start < modelMiB {
		return nil, modelNotEnoughCapacity
	}
	p.offset, p.size = start, end-start
	d.parts = append(d.parts, p)
	if p.hasVolume(d.style) {
		v := m.newVolume(d, p)
		if args.flag("AssignDriveLetter") {
			for l := byte('D'); l <= 'Z'; l++ {
				if m.letters[l] == nil {
					m.letters[l] = v
					break
				}
			}
		}
	}
	return wmi.Props{"CreatedPartition": fmt.Sprintf("MSFT_Partition (DiskNumber = %d, PartitionNumber = %d)", d.number, p.number)}, wmi.Success
}

// supportedSize is MSFT_Partition.GetSupportedSize: SizeMin is what the
// file system holds (the defragmenter cannot move below it), SizeMax the
// partition plus the free space right after it.
func (m *winModel) supportedSize(d *modelDisk, p *modelPartition) (lo, hi int64, code wmi.ReturnCode) {
	if d.offline {
		return 0, 0, wmi.DiskOffline
	}
	lo = p.size
	if v := p.vol; v != nil && v.root != nil {
		lo = v.used()
	}
	return lo, d.maxSize(p), wmi.Success
}

// resize is MSFT_Partition.Resize: the partition and its file system take
// the new total size, within GetSupportedSize's bounds; a change of less
// than 1 MiB is "Size Not Supported", as Windows refuses tiny extents
// (kubernetes-csi/csi-proxy#195).
func (m *winModel) resize(d *modelDisk, p *modelPartition, args modelArgs) wmi.ReturnCode {
	size, ok := args.number("Size")
	if !ok || size == 0 {
		return wmi.InvalidParameter
	}
	lo, hi, code := m.supportedSize(d, p)
	switch {
	case code != wmi.Success:
		return code
	case int64(size) < lo || int64(size) > hi:
		return wmi.SizeNotSupported
	case int64(size)-p.size < modelMiB && p.size-int64(size) < modelMiB:
		return wmi.SizeNotSupported
	}
	p.size = int64(size)
	return wmi.Success
}

// format is MSFT_Volume.Format: a new empty file system (fact sheet §2.3).
func (m *winModel) format(v *modelVolume, args modelArgs) (wmi.Props, wmi.ReturnCode) {
	fs := map[string]string{"NTFS": "NTFS", "REFS": "ReFS", "FAT32": "FAT32"}[strings.ToUpper(args.str("FileSystem"))]
	switch {
	case fs == "":
		return nil, wmi.FileSystemNotSupported
	case v.disk.system:
		return nil, modelSystemPartitionOp
	}
	v.fs, v.root = fs, newModelDir("")
	return wmi.Props{"FormattedVolume": fmt.Sprintf("MSFT_Volume (UniqueId = %q)", v.guid)}, wmi.Success
}

func (m *winModel) callStatic(ctx context.Context, class, method string, _ ...wmi.Param) (wmi.Props, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if strings.EqualFold(class, classStorageSetting) && strings.EqualFold(method, "UpdateHostStorageCache") {
		m.rescans++
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	m.t.Errorf("model: static %s.%s is not modelled", class, method)
	return nil, &wmi.COMError{Op: class + "." + method, HRESULT: 0x8004100C} // WBEM_E_NOT_SUPPORTED
}

var _ system = (*winModel)(nil)
