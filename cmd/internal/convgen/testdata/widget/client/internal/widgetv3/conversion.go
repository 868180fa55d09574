package widgetv3

import (
	"strconv"

	pb "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/api/widget/v3"
	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/groups/widget"
)

// v3 called Get Fetch; its scope meant nothing and its error was never set.
//
//convgen:rename Fetch=Get
//convgen:ignore scope Error

// fromModelFetchRequest writes v3's decimal number.
func fromModelFetchRequest(in *widget.GetRequest) *pb.FetchRequest {
	out := autoFromModelFetchRequest(in)
	out.Number = strconv.FormatUint(uint64(in.Number), 10)
	return out
}

// toModelFetchResponse parses by_number's decimal keys, which can fail; it
// calls the generated toModelPart.
func toModelFetchResponse(in *pb.FetchResponse) (*widget.GetResponse, error) {
	out := autoToModelFetchResponse(in)
	out.ByNumber = make(map[uint32]*widget.Part, len(in.ByNumber))
	for k, v := range in.ByNumber {
		n, err := strconv.ParseUint(k, 10, 32)
		if err != nil {
			return nil, err
		}
		out.ByNumber[uint32(n)] = toModelPart(v)
	}
	return out, nil
}
