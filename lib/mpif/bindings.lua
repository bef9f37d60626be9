-- lib/mpif/bindings.lua: the one table of lamkit's Fortran bindings (mpif.h, use mpi, use mpi_f08).
--
-- Each routine of include/mpi.h has an entry here: its Fortran arguments, in the order of the C
-- prototype, as "fortran_name:kind" (the names are the MPI standard's, which keyword calls use).
-- gen.lua checks every entry against the C prototype (same number of arguments, each kind
-- fitting its C type) and fails the build for a C routine with no entry, so a routine added to
-- mpi.h cannot be forgotten. Kinds (doc/FORTRAN.md has the whole list):
--   int int* int[] int[]*        INTEGER (in / out / array in / array out or inout)
--   log log* log[N] log[N]*      LOGICAL, converted to and from C's int (N: the length argument)
--   aint aint* aint[] aint[]*    INTEGER(KIND=MPI_ADDRESS_KIND)
--   iaint iaint* iaint[N]        MPI-1's INTEGER addresses, MPI_Aint in C
--   Comm Datatype Group Op Info Errhandler Win Request (+ * [] []* [N]*)   handles; & marks
--     one the call reads and writes (a request MPI_WAIT completes), * one it only writes
--   cbuf buf (in / out choice buffer), acbuf abuf (nonblocking: ASYNCHRONOUS in mpi_f08);
--     "/count/type" names the count and datatype that describe it (a non-contiguous array
--     section in mpi_f08 becomes a derived datatype); loc: an address argument, no sentinels
--   status status* status[N]*   INTEGER(MPI_STATUS_SIZE) / TYPE(MPI_Status), IGNORE sentinels
--   str str*:SIZE                CHARACTER(*) in / out (SIZE: C buffer, constant or argument)
--   idx* idx[N]*                 1-based indices (Waitany, Waitsome...)
--   errs*  wts wts*  ranges      error codes (MPI_ERRCODES_IGNORE), graph weights
--                                (MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY), INTEGER ranges(3,*)
--   ptr*                         a base pointer out (INTEGER(ADDRESS_KIND) / TYPE(C_PTR))
--   attr attr* iattr iattr* extra iextra   attribute values and extra state
--   fn:X                         a callback of abstract interface MPI_X
--   argv argvs strs bufaddr*     spawn's argument vectors, MPI_Buffer_detach's address
--   -                            a C argument Fortran does not have (passed as NULL)
-- Options: old = deleted in MPI-3 (no mpi_f08 binding); custom = the C body is hand-written
-- (mpif_custom.c, mpif_<Name>); ret = a function ("double", "aint") without ierror; noerr = no
-- ierror; nof08 = why mpi_f08 has none; c_only = why Fortran has no binding at all.
local T = {}
local function R(name, args, opt)
	T[#T + 1] = {name = name, args = args, opt = opt or {}}
end
local OLD = {old = true}
local CUSTOM = {custom = true}

-- Environment and errors
R("Init", "- -")
R("Init_thread", "- - required:int provided:int*")
R("Initialized", "flag:log*")
R("Finalize", "", CUSTOM)
R("Finalized", "flag:log*")
R("Query_thread", "provided:int*")
R("Is_thread_main", "flag:log*")
R("Abort", "comm:Comm errorcode:int")
R("Get_version", "version:int* subversion:int*")
R("Get_library_version", "version:str*:MPI_MAX_LIBRARY_VERSION_STRING resultlen:int*")
R("Get_processor_name", "name:str*:MPI_MAX_PROCESSOR_NAME resultlen:int*")
R("Pcontrol", "level:int", {noerr = true, custom = true})
R("Error_class", "errorcode:int errorclass:int*")
R("Error_string", "errorcode:int string:str*:MPI_MAX_ERROR_STRING resultlen:int*")
R("Add_error_class", "errorclass:int*")
R("Add_error_code", "errorclass:int errorcode:int*")
R("Add_error_string", "errorcode:int string:str")
R("Comm_create_errhandler", "comm_errhandler_fn:fn:Comm_errhandler_function errhandler:Errhandler*")
R("Comm_set_errhandler", "comm:Comm errhandler:Errhandler")
R("Comm_get_errhandler", "comm:Comm errhandler:Errhandler*")
R("Comm_call_errhandler", "comm:Comm errorcode:int")
R("Errhandler_create", "function:fn:Handler_function errhandler:Errhandler*", OLD)
R("Errhandler_set", "comm:Comm errhandler:Errhandler", OLD)
R("Errhandler_get", "comm:Comm errhandler:Errhandler*", OLD)
R("Errhandler_free", "errhandler:Errhandler*")
R("Alloc_mem", "size:aint info:Info baseptr:ptr*")
R("Free_mem", "base:loc")
R("Wtime", "", {ret = "double"})
R("Wtick", "", {ret = "double"})

-- Point-to-point
R("Send", "buf:cbuf/count/datatype count:int datatype:Datatype dest:int tag:int comm:Comm")
R("Recv", "buf:buf/count/datatype count:int datatype:Datatype source:int tag:int comm:Comm status:status*")
R("Bsend", "buf:cbuf/count/datatype count:int datatype:Datatype dest:int tag:int comm:Comm")
R("Ssend", "buf:cbuf/count/datatype count:int datatype:Datatype dest:int tag:int comm:Comm")
R("Rsend", "buf:cbuf/count/datatype count:int datatype:Datatype dest:int tag:int comm:Comm")
for _, n in ipairs({"Isend", "Ibsend", "Issend", "Irsend", "Send_init", "Bsend_init", "Ssend_init",
	"Rsend_init"}) do
	R(n, "buf:acbuf/count/datatype count:int datatype:Datatype dest:int tag:int comm:Comm request:Request*")
end
R("Irecv", "buf:abuf/count/datatype count:int datatype:Datatype source:int tag:int comm:Comm request:Request*")
R("Recv_init", "buf:abuf/count/datatype count:int datatype:Datatype source:int tag:int comm:Comm request:Request*")
R("Start", "request:Request&")
R("Startall", "count:int array_of_requests:Request[count]*")
R("Sendrecv", "sendbuf:cbuf/sendcount/sendtype sendcount:int sendtype:Datatype dest:int sendtag:int " ..
	"recvbuf:buf/recvcount/recvtype recvcount:int recvtype:Datatype source:int recvtag:int comm:Comm status:status*")
R("Sendrecv_replace", "buf:buf/count/datatype count:int datatype:Datatype dest:int sendtag:int " ..
	"source:int recvtag:int comm:Comm status:status*")
R("Probe", "source:int tag:int comm:Comm status:status*")
R("Iprobe", "source:int tag:int comm:Comm flag:log* status:status*")
R("Wait", "request:Request& status:status*")
R("Waitall", "count:int array_of_requests:Request[count]* array_of_statuses:status[count]*")
R("Waitany", "count:int array_of_requests:Request[count]* index:idx* status:status*")
R("Waitsome", "incount:int array_of_requests:Request[incount]* outcount:int* " ..
	"array_of_indices:idx[outcount]* array_of_statuses:status[incount]*")
R("Test", "request:Request& flag:log* status:status*")
R("Testall", "count:int array_of_requests:Request[count]* flag:log* array_of_statuses:status[count]*")
R("Testany", "count:int array_of_requests:Request[count]* index:idx* flag:log* status:status*")
R("Testsome", "incount:int array_of_requests:Request[incount]* outcount:int* " ..
	"array_of_indices:idx[outcount]* array_of_statuses:status[incount]*")
R("Request_get_status", "request:Request flag:log* status:status*")
R("Cancel", "request:Request&")
R("Test_cancelled", "status:status flag:log*")
R("Request_free", "request:Request&")
R("Get_count", "status:status datatype:Datatype count:int*")
R("Get_elements", "status:status datatype:Datatype count:int*")
R("Status_set_elements", "status:status* datatype:Datatype count:int")
R("Status_set_cancelled", "status:status* flag:log")
R("Grequest_start", "query_fn:fn:Grequest_query_function free_fn:fn:Grequest_free_function " ..
	"cancel_fn:fn:Grequest_cancel_function extra_state:extra* request:Request*", CUSTOM)
R("Grequest_complete", "request:Request")
R("Buffer_attach", "buffer:buf size:int")
R("Buffer_detach", "buffer_addr:bufaddr* size:int*")

-- Collectives
local C = "comm:Comm"
R("Barrier", C)
R("Bcast", "buffer:buf/count/datatype count:int datatype:Datatype root:int " .. C)
local SB = "sendbuf:cbuf/sendcount/sendtype sendcount:int sendtype:Datatype "
local RB = "recvbuf:buf/recvcount/recvtype recvcount:int recvtype:Datatype "
R("Gather", SB .. RB .. "root:int " .. C)
R("Gatherv", SB .. "recvbuf:buf recvcounts:int[]? displs:int[]? recvtype:Datatype root:int " .. C)
R("Scatter", SB .. RB .. "root:int " .. C)
R("Scatterv", "sendbuf:cbuf sendcounts:int[]? displs:int[]? sendtype:Datatype " .. RB .. "root:int " .. C)
R("Allgather", SB .. RB .. C)
R("Allgatherv", SB .. "recvbuf:buf recvcounts:int[] displs:int[] recvtype:Datatype " .. C)
R("Alltoall", SB .. RB .. C)
-- "?": with MPI_IN_PLACE these are ignored and programs pass a scalar (use mpi accepts it)
local A2AV = "sendbuf:cbuf sendcounts:int[]? sdispls:int[]? sendtype:Datatype " ..
	"recvbuf:buf recvcounts:int[] rdispls:int[] recvtype:Datatype "
local A2AW = "sendbuf:cbuf sendcounts:int[]? sdispls:int[]? sendtypes:Datatype[]? " ..
	"recvbuf:buf recvcounts:int[] rdispls:int[] recvtypes:Datatype[] "
R("Alltoallv", A2AV .. C)
R("Alltoallw", A2AW .. C)
local RED = "sendbuf:cbuf/count/datatype recvbuf:buf/count/datatype count:int datatype:Datatype op:Op "
R("Reduce", RED .. "root:int " .. C)
R("Allreduce", RED .. C)
R("Reduce_local", "inbuf:cbuf/count/datatype inoutbuf:buf/count/datatype count:int datatype:Datatype op:Op")
R("Reduce_scatter", "sendbuf:cbuf recvbuf:buf recvcounts:int[] datatype:Datatype op:Op " .. C)
R("Reduce_scatter_block", "sendbuf:cbuf recvbuf:buf/recvcount/datatype recvcount:int " ..
	"datatype:Datatype op:Op " .. C)
R("Scan", RED .. C)
R("Exscan", RED .. C)

-- Nonblocking collectives: the blocking argument lists with asynchronous buffers and a request
local function async(s)
	return (s:gsub(":cbuf", ":acbuf"):gsub(":buf", ":abuf"))
end
local RQ = " request:Request*"
R("Ibarrier", C .. RQ)
R("Ibcast", async("buffer:buf/count/datatype count:int datatype:Datatype root:int ") .. C .. RQ)
R("Igather", async(SB .. RB) .. "root:int " .. C .. RQ)
R("Igatherv", async(SB .. "recvbuf:buf recvcounts:int[]? displs:int[]? recvtype:Datatype ") ..
	"root:int " .. C .. RQ)
R("Iscatter", async(SB .. RB) .. "root:int " .. C .. RQ)
R("Iscatterv", async("sendbuf:cbuf sendcounts:int[]? displs:int[]? sendtype:Datatype " .. RB) ..
	"root:int " .. C .. RQ)
R("Iallgather", async(SB .. RB) .. C .. RQ)
R("Iallgatherv", async(SB .. "recvbuf:buf recvcounts:int[] displs:int[] recvtype:Datatype ") .. C .. RQ)
R("Ialltoall", async(SB .. RB) .. C .. RQ)
R("Ialltoallv", async(A2AV) .. C .. RQ)
R("Ialltoallw", async(A2AW) .. C .. RQ)
R("Ireduce", async(RED) .. "root:int " .. C .. RQ)
R("Iallreduce", async(RED) .. C .. RQ)
R("Ireduce_scatter", async("sendbuf:cbuf recvbuf:buf ") .. "recvcounts:int[] datatype:Datatype op:Op " .. C .. RQ)
R("Ireduce_scatter_block", async("sendbuf:cbuf recvbuf:buf/recvcount/datatype ") ..
	"recvcount:int datatype:Datatype op:Op " .. C .. RQ)
R("Iscan", async(RED) .. C .. RQ)
R("Iexscan", async(RED) .. C .. RQ)

-- One-sided communication
R("Win_create", "base:abuf size:aint disp_unit:int info:Info comm:Comm win:Win*")
R("Win_create_dynamic", "info:Info comm:Comm win:Win*")
R("Win_attach", "win:Win base:abuf size:aint")
R("Win_detach", "win:Win base:loc")
R("Win_allocate", "size:aint disp_unit:int info:Info comm:Comm baseptr:ptr* win:Win*")
R("Win_allocate_shared", "size:aint disp_unit:int info:Info comm:Comm baseptr:ptr* win:Win*")
R("Win_shared_query", "win:Win rank:int size:aint* disp_unit:int* baseptr:ptr*")
R("Win_free", "win:Win*")
R("Win_get_group", "win:Win group:Group*")
R("Win_create_keyval", "win_copy_attr_fn:fn:Win_copy_attr_function " ..
	"win_delete_attr_fn:fn:Win_delete_attr_function win_keyval:int* extra_state:extra", CUSTOM)
R("Win_free_keyval", "win_keyval:int*")
R("Win_set_attr", "win:Win win_keyval:int attribute_val:attr", CUSTOM)
R("Win_get_attr", "win:Win win_keyval:int attribute_val:attr* flag:log*", CUSTOM)
R("Win_delete_attr", "win:Win win_keyval:int")
R("Win_set_name", "win:Win win_name:str")
R("Win_get_name", "win:Win win_name:str*:MPI_MAX_OBJECT_NAME resultlen:int*")
R("Win_create_errhandler", "win_errhandler_fn:fn:Win_errhandler_function errhandler:Errhandler*")
R("Win_set_errhandler", "win:Win errhandler:Errhandler")
R("Win_get_errhandler", "win:Win errhandler:Errhandler*")
R("Win_call_errhandler", "win:Win errorcode:int")
R("Win_set_info", "win:Win info:Info")
R("Win_get_info", "win:Win info_used:Info*")
R("Win_fence", "assert:int win:Win")
R("Win_post", "group:Group assert:int win:Win")
R("Win_start", "group:Group assert:int win:Win")
R("Win_complete", "win:Win")
R("Win_wait", "win:Win")
R("Win_test", "win:Win flag:log*")
R("Win_lock", "lock_type:int rank:int assert:int win:Win")
R("Win_unlock", "rank:int win:Win")
R("Win_lock_all", "assert:int win:Win")
R("Win_unlock_all", "win:Win")
R("Win_flush", "rank:int win:Win")
R("Win_flush_all", "win:Win")
R("Win_flush_local", "rank:int win:Win")
R("Win_flush_local_all", "win:Win")
R("Win_sync", "win:Win")
local OR = "origin_addr:acbuf/origin_count/origin_datatype origin_count:int origin_datatype:Datatype "
local TG = "target_rank:int target_disp:aint target_count:int target_datatype:Datatype "
R("Put", OR .. TG .. "win:Win")
R("Get", OR:gsub(":acbuf", ":abuf") .. TG .. "win:Win")
R("Accumulate", OR .. TG .. "op:Op win:Win")
local RS = "result_addr:abuf/result_count/result_datatype result_count:int result_datatype:Datatype "
R("Get_accumulate", OR .. RS .. TG .. "op:Op win:Win")
R("Fetch_and_op", "origin_addr:acbuf result_addr:abuf datatype:Datatype target_rank:int " ..
	"target_disp:aint op:Op win:Win")
R("Compare_and_swap", "origin_addr:acbuf compare_addr:acbuf result_addr:abuf datatype:Datatype " ..
	"target_rank:int target_disp:aint win:Win")
R("Rput", OR .. TG .. "win:Win" .. RQ)
R("Rget", OR:gsub(":acbuf", ":abuf") .. TG .. "win:Win" .. RQ)
R("Raccumulate", OR .. TG .. "op:Op win:Win" .. RQ)
R("Rget_accumulate", OR .. RS .. TG .. "op:Op win:Win" .. RQ)
R("Op_create", "user_fn:fn:User_function commute:log op:Op*")
R("Op_free", "op:Op*")
R("Op_commutative", "op:Op commute:log*")

-- Groups and communicators
R("Comm_group", "comm:Comm group:Group*")
R("Group_size", "group:Group size:int*")
R("Group_rank", "group:Group rank:int*")
R("Group_translate_ranks", "group1:Group n:int ranks1:int[] group2:Group ranks2:int[]*")
R("Group_compare", "group1:Group group2:Group result:int*")
R("Group_union", "group1:Group group2:Group newgroup:Group*")
R("Group_intersection", "group1:Group group2:Group newgroup:Group*")
R("Group_difference", "group1:Group group2:Group newgroup:Group*")
R("Group_incl", "group:Group n:int ranks:int[] newgroup:Group*")
R("Group_excl", "group:Group n:int ranks:int[] newgroup:Group*")
R("Group_range_incl", "group:Group n:int ranges:ranges newgroup:Group*")
R("Group_range_excl", "group:Group n:int ranges:ranges newgroup:Group*")
R("Group_free", "group:Group*")
R("Comm_size", "comm:Comm size:int*")
R("Comm_rank", "comm:Comm rank:int*")
R("Comm_dup", "comm:Comm newcomm:Comm*")
R("Comm_split", "comm:Comm color:int key:int newcomm:Comm*")
R("Comm_create", "comm:Comm group:Group newcomm:Comm*")
R("Comm_compare", "comm1:Comm comm2:Comm result:int*")
R("Comm_free", "comm:Comm*")
R("Comm_set_name", "comm:Comm comm_name:str")
R("Comm_get_name", "comm:Comm comm_name:str*:MPI_MAX_OBJECT_NAME resultlen:int*")
R("Comm_test_inter", "comm:Comm flag:log*")
R("Comm_remote_size", "comm:Comm size:int*")
R("Comm_remote_group", "comm:Comm group:Group*")
R("Intercomm_create", "local_comm:Comm local_leader:int peer_comm:Comm remote_leader:int tag:int " ..
	"newintercomm:Comm*")
R("Intercomm_merge", "intercomm:Comm high:log newintracomm:Comm*")

-- Topologies, dynamic processes, info objects
R("Dims_create", "nnodes:int ndims:int dims:int[]*")
R("Cart_create", "comm_old:Comm ndims:int dims:int[] periods:log[ndims] reorder:log comm_cart:Comm*")
R("Cart_get", "comm:Comm maxdims:int dims:int[]* periods:log[maxdims]* coords:int[]*")
R("Cartdim_get", "comm:Comm ndims:int*")
R("Cart_rank", "comm:Comm coords:int[] rank:int*")
R("Cart_coords", "comm:Comm rank:int maxdims:int coords:int[]*")
R("Cart_shift", "comm:Comm direction:int disp:int rank_source:int* rank_dest:int*")
R("Cart_sub", "comm:Comm remain_dims:log[#cartdim] newcomm:Comm*")
R("Topo_test", "comm:Comm status:int*")
R("Cart_map", "comm:Comm ndims:int dims:int[] periods:log[ndims] newrank:int*")
R("Graph_create", "comm_old:Comm nnodes:int index:int[] edges:int[] reorder:log comm_graph:Comm*")
R("Graphdims_get", "comm:Comm nnodes:int* nedges:int*")
R("Graph_get", "comm:Comm maxindex:int maxedges:int index:int[]* edges:int[]*")
R("Graph_neighbors_count", "comm:Comm rank:int nneighbors:int*")
R("Graph_neighbors", "comm:Comm rank:int maxneighbors:int neighbors:int[]*")
R("Graph_map", "comm:Comm nnodes:int index:int[] edges:int[] newrank:int*")
R("Dist_graph_create_adjacent", "comm_old:Comm indegree:int sources:int[] sourceweights:wts " ..
	"outdegree:int destinations:int[] destweights:wts info:Info reorder:log comm_dist_graph:Comm*")
R("Dist_graph_create", "comm_old:Comm n:int sources:int[] degrees:int[] destinations:int[] " ..
	"weights:wts info:Info reorder:log comm_dist_graph:Comm*")
R("Dist_graph_neighbors_count", "comm:Comm indegree:int* outdegree:int* weighted:log*")
R("Dist_graph_neighbors", "comm:Comm maxindegree:int sources:int[]* sourceweights:wts* " ..
	"maxoutdegree:int destinations:int[]* destweights:wts*")
R("Comm_get_parent", "parent:Comm*")
R("Comm_spawn", "command:str argv:argv maxprocs:int info:Info root:int comm:Comm intercomm:Comm* " ..
	"array_of_errcodes:errs*", CUSTOM)
R("Comm_spawn_multiple", "count:int array_of_commands:strs array_of_argv:argvs " ..
	"array_of_maxprocs:int[] array_of_info:Info[] root:int comm:Comm intercomm:Comm* " ..
	"array_of_errcodes:errs*", CUSTOM)
R("Open_port", "info:Info port_name:str*:MPI_MAX_PORT_NAME")
R("Close_port", "port_name:str")
R("Comm_accept", "port_name:str info:Info root:int comm:Comm newcomm:Comm*")
R("Comm_connect", "port_name:str info:Info root:int comm:Comm newcomm:Comm*")
R("Comm_disconnect", "comm:Comm*")
R("Comm_join", "fd:int intercomm:Comm*")
R("Publish_name", "service_name:str info:Info port_name:str")
R("Unpublish_name", "service_name:str info:Info port_name:str")
R("Lookup_name", "service_name:str info:Info port_name:str*:MPI_MAX_PORT_NAME")
R("Comm_split_type", "comm:Comm split_type:int key:int info:Info newcomm:Comm*")
R("Info_create", "info:Info*")
R("Info_set", "info:Info key:str value:str")
R("Info_get", "info:Info key:str valuelen:int value:str*:valuelen flag:log*")
R("Info_get_valuelen", "info:Info key:str valuelen:int* flag:log*")
R("Info_delete", "info:Info key:str")
R("Info_get_nkeys", "info:Info nkeys:int*")
R("Info_get_nthkey", "info:Info n:int key:str*:MPI_MAX_INFO_KEY")
R("Info_dup", "info:Info newinfo:Info*")
R("Info_free", "info:Info*")

-- Datatypes
local NT = "oldtype:Datatype newtype:Datatype*"
R("Type_contiguous", "count:int " .. NT)
R("Type_vector", "count:int blocklength:int stride:int " .. NT)
R("Type_hvector", "count:int blocklength:int stride:iaint " .. NT, OLD)
R("Type_create_hvector", "count:int blocklength:int stride:aint " .. NT)
R("Type_indexed", "count:int array_of_blocklengths:int[] array_of_displacements:int[] " .. NT)
R("Type_hindexed", "count:int array_of_blocklengths:int[] array_of_displacements:iaint[count] " .. NT, OLD)
R("Type_create_hindexed", "count:int array_of_blocklengths:int[] array_of_displacements:aint[] " .. NT)
R("Type_create_indexed_block", "count:int blocklength:int array_of_displacements:int[] " .. NT)
R("Type_struct", "count:int array_of_blocklengths:int[] array_of_displacements:iaint[count] " ..
	"array_of_types:Datatype[] newtype:Datatype*", OLD)
R("Type_create_struct", "count:int array_of_blocklengths:int[] array_of_displacements:aint[] " ..
	"array_of_types:Datatype[] newtype:Datatype*")
R("Type_create_resized", "oldtype:Datatype lb:aint extent:aint newtype:Datatype*")
R("Type_dup", "oldtype:Datatype newtype:Datatype*")
R("Type_create_subarray", "ndims:int array_of_sizes:int[] array_of_subsizes:int[] " ..
	"array_of_starts:int[] order:int " .. NT)
R("Type_create_darray", "size:int rank:int ndims:int array_of_gsizes:int[] array_of_distribs:int[] " ..
	"array_of_dargs:int[] array_of_psizes:int[] order:int " .. NT)
R("Type_match_size", "typeclass:int size:int datatype:Datatype*")
R("Type_create_f90_real", "p:int r:int newtype:Datatype*")
R("Type_create_f90_complex", "p:int r:int newtype:Datatype*")
R("Type_create_f90_integer", "r:int newtype:Datatype*")
R("Type_commit", "datatype:Datatype*")
R("Type_free", "datatype:Datatype*")
R("Type_size", "datatype:Datatype size:int*")
R("Type_extent", "datatype:Datatype extent:iaint*", OLD)
R("Type_lb", "datatype:Datatype displacement:iaint*", OLD)
R("Type_ub", "datatype:Datatype displacement:iaint*", OLD)
R("Type_get_extent", "datatype:Datatype lb:aint* extent:aint*")
R("Type_get_true_extent", "datatype:Datatype true_lb:aint* true_extent:aint*")
R("Type_get_envelope", "datatype:Datatype num_integers:int* num_addresses:int* num_datatypes:int* " ..
	"combiner:int*")
R("Type_get_contents", "datatype:Datatype max_integers:int max_addresses:int max_datatypes:int " ..
	"array_of_integers:int[]* array_of_addresses:aint[]* array_of_datatypes:Datatype[]*")
R("Type_set_name", "datatype:Datatype type_name:str")
R("Type_get_name", "datatype:Datatype type_name:str*:MPI_MAX_OBJECT_NAME resultlen:int*")
R("Get_address", "location:loc address:aint*")
R("Address", "location:loc address:iaint*", {old = true, custom = true})
R("Aint_add", "base:aint disp:aint", {ret = "aint"})
R("Aint_diff", "addr1:aint addr2:aint", {ret = "aint"})
R("Pack", "inbuf:cbuf/incount/datatype incount:int datatype:Datatype outbuf:buf outsize:int " ..
	"position:int* comm:Comm")
R("Unpack", "inbuf:cbuf insize:int position:int* outbuf:buf/outcount/datatype outcount:int " ..
	"datatype:Datatype comm:Comm")
R("Pack_size", "incount:int datatype:Datatype comm:Comm size:int*")
R("Pack_external", "datarep:str inbuf:cbuf/incount/datatype incount:int datatype:Datatype " ..
	"outbuf:buf outsize:aint position:aint*")
R("Unpack_external", "datarep:str inbuf:cbuf insize:aint position:aint* " ..
	"outbuf:buf/outcount/datatype outcount:int datatype:Datatype")
R("Pack_external_size", "datarep:str incount:int datatype:Datatype size:aint*")

-- MPI-3 datatype routines with MPI_Count and hindexed blocks
R("Type_create_hindexed_block", "count:int blocklength:int array_of_displacements:aint[] " .. NT)
R("Type_size_x", "datatype:Datatype size:cnt*")
R("Type_get_extent_x", "datatype:Datatype lb:cnt* extent:cnt*")
R("Type_get_true_extent_x", "datatype:Datatype true_lb:cnt* true_extent:cnt*")
R("Get_elements_x", "status:status datatype:Datatype count:cnt*")
R("Status_set_elements_x", "status:status* datatype:Datatype count:cnt")

-- MPI-IO (MPI-3.1 chapter 13): file handles are INTEGER / TYPE(MPI_File), offsets
-- INTEGER(KIND=MPI_OFFSET_KIND)
local FH = "fh:File "
local RD, WR = "buf:buf/count/datatype count:int datatype:Datatype ",
	"buf:cbuf/count/datatype count:int datatype:Datatype "
local ARD, AWR = "buf:abuf/count/datatype count:int datatype:Datatype ",
	"buf:acbuf/count/datatype count:int datatype:Datatype "
R("File_open", "comm:Comm filename:str amode:int info:Info fh:File*")
R("File_close", "fh:File*")
R("File_delete", "filename:str info:Info")
R("File_set_size", FH .. "size:off")
R("File_preallocate", FH .. "size:off")
R("File_get_size", FH .. "size:off*")
R("File_get_group", FH .. "group:Group*")
R("File_get_amode", FH .. "amode:int*")
R("File_set_info", FH .. "info:Info")
R("File_get_info", FH .. "info_used:Info*")
R("File_set_view", FH .. "disp:off etype:Datatype filetype:Datatype datarep:str info:Info")
R("File_get_view", FH .. "disp:off* etype:Datatype* filetype:Datatype* " ..
	"datarep:str*:MPI_MAX_DATAREP_STRING")
for _, x in ipairs({"_at", "_at_all"}) do
	R("File_read" .. x, FH .. "offset:off " .. RD .. "status:status*")
	R("File_write" .. x, FH .. "offset:off " .. WR .. "status:status*")
	R("File_iread" .. x, FH .. "offset:off " .. ARD .. "request:Request*")
	R("File_iwrite" .. x, FH .. "offset:off " .. AWR .. "request:Request*")
end
for _, x in ipairs({"", "_all", "_shared"}) do
	R("File_read" .. x, FH .. RD .. "status:status*")
	R("File_write" .. x, FH .. WR .. "status:status*")
	R("File_iread" .. x, FH .. ARD .. "request:Request*")
	R("File_iwrite" .. x, FH .. AWR .. "request:Request*")
end
R("File_read_ordered", FH .. RD .. "status:status*")
R("File_write_ordered", FH .. WR .. "status:status*")
R("File_seek", FH .. "offset:off whence:int")
R("File_get_position", FH .. "offset:off*")
R("File_get_byte_offset", FH .. "offset:off disp:off*")
R("File_seek_shared", FH .. "offset:off whence:int")
R("File_get_position_shared", FH .. "offset:off*")
R("File_read_at_all_begin", FH .. "offset:off " .. ARD:gsub(" $", ""))
R("File_read_at_all_end", FH .. "buf:abuf status:status*")
R("File_write_at_all_begin", FH .. "offset:off " .. AWR:gsub(" $", ""))
R("File_write_at_all_end", FH .. "buf:acbuf status:status*")
for _, x in ipairs({"_all", "_ordered"}) do
	R("File_read" .. x .. "_begin", FH .. ARD:gsub(" $", ""))
	R("File_read" .. x .. "_end", FH .. "buf:abuf status:status*")
	R("File_write" .. x .. "_begin", FH .. AWR:gsub(" $", ""))
	R("File_write" .. x .. "_end", FH .. "buf:acbuf status:status*")
end
R("File_get_type_extent", FH .. "datatype:Datatype extent:aint*")
R("Register_datarep", "datarep:str read_conversion_fn:fn:Datarep_conversion_function " ..
	"write_conversion_fn:fn:Datarep_conversion_function dtype_file_extent_fn:fn:Datarep_extent_function " ..
	"extra_state:extra", CUSTOM)
R("File_set_atomicity", FH .. "flag:log")
R("File_get_atomicity", FH .. "flag:log*")
R("File_sync", "fh:File")
R("File_create_errhandler", "file_errhandler_fn:fn:File_errhandler_function errhandler:Errhandler*")
R("File_set_errhandler", FH .. "errhandler:Errhandler")
R("File_get_errhandler", FH .. "errhandler:Errhandler*")
R("File_call_errhandler", FH .. "errorcode:int")

-- Attributes
R("Comm_create_keyval", "comm_copy_attr_fn:fn:Comm_copy_attr_function " ..
	"comm_delete_attr_fn:fn:Comm_delete_attr_function comm_keyval:int* extra_state:extra", CUSTOM)
R("Comm_free_keyval", "comm_keyval:int*")
R("Comm_set_attr", "comm:Comm comm_keyval:int attribute_val:attr", CUSTOM)
R("Comm_get_attr", "comm:Comm comm_keyval:int attribute_val:attr* flag:log*", CUSTOM)
R("Comm_delete_attr", "comm:Comm comm_keyval:int")
R("Type_create_keyval", "type_copy_attr_fn:fn:Type_copy_attr_function " ..
	"type_delete_attr_fn:fn:Type_delete_attr_function type_keyval:int* extra_state:extra", CUSTOM)
R("Type_free_keyval", "type_keyval:int*")
R("Type_set_attr", "datatype:Datatype type_keyval:int attribute_val:attr", CUSTOM)
R("Type_get_attr", "datatype:Datatype type_keyval:int attribute_val:attr* flag:log*", CUSTOM)
R("Type_delete_attr", "datatype:Datatype type_keyval:int")
R("Keyval_create", "copy_fn:fn:Copy_function delete_fn:fn:Delete_function keyval:int* " ..
	"extra_state:iextra", {old = true, custom = true})
R("Keyval_free", "keyval:int*", OLD)
R("Attr_put", "comm:Comm keyval:int attribute_val:iattr", {old = true, custom = true})
R("Attr_get", "comm:Comm keyval:int attribute_val:iattr* flag:log*", {old = true, custom = true})
R("Attr_delete", "comm:Comm keyval:int", OLD)

-- Routines of mpi.h that are C only in every MPI standard: the language conversions.
local C_ONLY = "a C-language conversion: the MPI standard defines no Fortran binding"
for _, k in ipairs({"Comm", "Group", "Type", "Op", "Info", "Errhandler", "Win", "Request", "File"}) do
	R(k .. "_c2f", "", {c_only = C_ONLY})
	R(k .. "_f2c", "", {c_only = C_ONLY})
end
R("Status_c2f", "", {c_only = C_ONLY})
R("Status_f2c", "", {c_only = C_ONLY})

-- Handle constants of mpi_f08: the #defines of mpi.h that name handles, by type (the
-- datatypes and operations are the sections of mpi.h between these comments).
local H = {
	Datatype = {section = {"/* Predefined datatypes. */", "/* Reduction operations. */"}},
	Op = {section = {"/* Reduction operations. */", "/* Error classes. */"}},
	Comm = {"MPI_COMM_NULL", "MPI_COMM_WORLD", "MPI_COMM_SELF"},
	Group = {"MPI_GROUP_NULL", "MPI_GROUP_EMPTY"},
	Errhandler = {"MPI_ERRHANDLER_NULL", "MPI_ERRORS_ARE_FATAL", "MPI_ERRORS_RETURN"},
	Info = {"MPI_INFO_NULL", "MPI_INFO_ENV"},
	Request = {"MPI_REQUEST_NULL"},
	Win = {"MPI_WIN_NULL"},
	File = {"MPI_FILE_NULL"},
}

-- Constants of mpi.h with no integer value: Fortran has them as the sentinels and callback
-- procedures below, or not at all (the reason given).
local NOT_INT = {
	MPI_BOTTOM = "sentinel", MPI_IN_PLACE = "sentinel", MPI_STATUS_IGNORE = "sentinel",
	MPI_STATUSES_IGNORE = "sentinel", MPI_ERRCODES_IGNORE = "sentinel",
	MPI_UNWEIGHTED = "sentinel", MPI_WEIGHTS_EMPTY = "sentinel", MPI_ARGV_NULL = "sentinel",
	MPI_ARGVS_NULL = "sentinel",
	MPI_NULL_COPY_FN = "callback", MPI_DUP_FN = "callback", MPI_NULL_DELETE_FN = "callback",
	MPI_COMM_NULL_COPY_FN = "callback", MPI_COMM_DUP_FN = "callback",
	MPI_COMM_NULL_DELETE_FN = "callback", MPI_TYPE_NULL_COPY_FN = "callback",
	MPI_TYPE_DUP_FN = "callback", MPI_TYPE_NULL_DELETE_FN = "callback",
	MPI_WIN_NULL_COPY_FN = "callback", MPI_WIN_DUP_FN = "callback",
	MPI_WIN_NULL_DELETE_FN = "callback", MPI_CONVERSION_FN_NULL = "callback",
}

return {routines = T, handles = H, not_int = NOT_INT}
