/* src/mca/pstat/base/static-components.h: the pstat components built into lamkit
 * (build/third_party/pmix). */
const pmix_mca_base_component_t *pmix_mca_pstat_base_static_components[] = {NULL};
