/* src/mca/gds/base/static-components.h: the gds components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_gds_hash_component;
const pmix_mca_base_component_t *pmix_mca_gds_base_static_components[] = {
    &pmix_mca_gds_hash_component, NULL};
