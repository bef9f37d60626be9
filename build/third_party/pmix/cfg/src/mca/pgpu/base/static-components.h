/* src/mca/pgpu/base/static-components.h: the pgpu components built into lamkit
 * (build/third_party/pmix). */
const pmix_mca_base_component_t *pmix_mca_pgpu_base_static_components[] = {NULL};
